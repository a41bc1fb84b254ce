import { FLOW_FAMILIES } from '@payments/contracts';
import { FLOWS, STATUSES, STATUSES_BY_FLOW } from '../apps/console/src/transport/http/filters';
import type { PaymentStatus } from '../apps/orchestrator/src/flows/card-payment/domain/state';
import type { CheckStatus } from '../apps/orchestrator/src/flows/pan-eligibility/domain/model';
import type { BudgetState } from '../apps/orchestrator/src/flows/payout-budget/domain/budget';
import type { PayoutStatus } from '../apps/orchestrator/src/flows/payout/domain/model';
import type { ScheduleStatus } from '../apps/orchestrator/src/flows/recurring-schedule/domain/state';
import type { TransferStatus } from '../apps/orchestrator/src/flows/transfer/domain/model';

/**
 * The console's Flow and Status selects against the registries (issue 36): the flows are
 * FLOW_FAMILIES' names, and each flow's statuses are its state's. Each list below names every
 * status of the flow's type but `initial` (a saga row is written with its first decision, never
 * initial): the compiler refuses a status added to the type and missing here, and the test then
 * fails until the console offers it too. A flow added to FLOW_FAMILIES fails the test until the
 * console lists its statuses (and this file its type).
 */
type Every<S extends string> = { readonly [K in Exclude<S, 'initial'>]: true };

const ORCHESTRATOR_STATUSES: Readonly<Record<string, Readonly<Record<string, true>>>> = {
  'card-payment': {
    requested: true,
    processing: true,
    'action-required': true,
    'outcome-unknown': true,
    approved: true,
    authorized: true,
    captured: true,
    'partially-returned': true,
    returned: true,
    voided: true,
    verified: true,
    declined: true,
    failed: true,
  } satisfies Every<PaymentStatus>,
  payout: {
    checking: true,
    registered: true,
    reserving: true,
    paying: true,
    paid: true,
    declined: true,
    failed: true,
    rejected: true,
    expired: true,
    refused: true,
  } satisfies Every<PayoutStatus>,
  'payout-budget': { open: true } satisfies Every<BudgetState['status']>,
  transfer: {
    transferring: true,
    transferred: true,
    declined: true,
    failed: true,
    refused: true,
  } satisfies Every<TransferStatus>,
  'pan-eligibility': {
    checking: true,
    eligible: true,
    'not-eligible': true,
    failed: true,
  } satisfies Every<CheckStatus>,
  'recurring-schedule': {
    registering: true,
    registered: true,
    'registration-failed': true,
    active: true,
    'past-due': true,
    paused: true,
    suspended: true,
    cancelled: true,
    completed: true,
  } satisfies Every<ScheduleStatus>,
};

describe('the console’s filter lists follow the registries', () => {
  it('offers exactly the flows of FLOW_FAMILIES', () => {
    expect([...FLOWS].sort()).toEqual(FLOW_FAMILIES.map((f): string => f.name).sort());
  });

  it('lists, for every flow of FLOW_FAMILIES, exactly the statuses of its state', () => {
    for (const family of FLOW_FAMILIES) {
      const name: string = family.name;
      expect({ flow: name, known: ORCHESTRATOR_STATUSES[name] !== undefined }).toEqual({
        flow: name,
        known: true,
      });
      expect({ flow: name, statuses: [...(STATUSES_BY_FLOW[name] ?? [])].sort() }).toEqual({
        flow: name,
        statuses: Object.keys(ORCHESTRATOR_STATUSES[name] ?? {}).sort(),
      });
    }
    expect(Object.keys(STATUSES_BY_FLOW).sort()).toEqual([...FLOWS].sort());
  });

  it('offers every status of any flow once in the Status select', () => {
    const all = new Set(Object.values(ORCHESTRATOR_STATUSES).flatMap((s) => Object.keys(s)));
    expect([...STATUSES].sort()).toEqual([...all].sort());
    expect(new Set(STATUSES).size).toBe(STATUSES.length);
  });
});
