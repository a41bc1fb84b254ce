import { loadConfig } from '@payments/config';
import { PaymentEvent, PayoutEvent, ScheduleEvent, TransferEvent } from '@payments/contracts';
import { orchestratorConfigShape } from '../../config';
import { registeredFlows } from '../../flows/registered-flows';
import { RECONCILED_FLOWS, RECONCILIATION, reconciliationOf } from './reconciled-flows';

const flows = registeredFlows(loadConfig('orchestrator', orchestratorConfigShape, {}));

describe('reconciliation covers every flow the orchestrator runs', () => {
  it('each registered flow is reconciled or declares that it moves no money', () => {
    const undeclared = flows
      .map((f) => f.name)
      .filter((name) => RECONCILIATION[name] === undefined);
    expect(undeclared).toEqual([]);
  });

  it('names no flow the orchestrator does not run (a stale entry hides a renamed flow)', () => {
    const running = new Set(flows.map((f) => f.name));
    expect(Object.keys(RECONCILIATION).filter((name) => !running.has(name))).toEqual([]);
  });

  it('the flows that move money are reconciled: card payments, payouts, transfers, schedules', () => {
    expect([...RECONCILED_FLOWS].sort()).toEqual(
      ['card-payment', 'payout', 'recurring-schedule', 'transfer'].sort(),
    );
  });
});

describe('reconciliation reads events the flows really write', () => {
  // The flows' event unions in the contracts: a renamed event must not leave reconciliation
  // reading nothing (it would fall back to the latest-operation check without a word).
  const written: Record<string, readonly string[]> = {
    'card-payment': PaymentEvent.options.map((o) => o.shape.type.value),
    payout: PayoutEvent.options.map((o) => o.shape.type.value),
    transfer: TransferEvent.options.map((o) => o.shape.type.value),
    'recurring-schedule': ScheduleEvent.options.map((o) => o.shape.type.value),
  };

  it.each(RECONCILED_FLOWS)(
    '%s: every history event it reads is one of its contract events',
    (flow) => {
      const reads = reconciliationOf(flow)?.historyEvents ?? [];
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.filter((type) => !(written[flow] ?? []).includes(type))).toEqual([]);
    },
  );
});
