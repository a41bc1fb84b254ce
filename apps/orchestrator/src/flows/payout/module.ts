import { PAYOUT_FAMILY, type PayoutEvent, type PayoutOperation } from '@payments/contracts';
import { refreshActions } from '../../domain/admin/admin-actions';
import {
  lifecycleEvents,
  requestReconciliation,
} from '../../domain/reconciliation/flow-reconciliation';
import type { MoneyEventType } from '../../runtime/outcome-metrics';
import type { FlowModule } from '../flow-module';
import { opensPayoutOrder, type PayoutState, type PayoutStatus } from './domain/model';
import { payoutExpectation } from './domain/reconciliation';
import { PAYOUT_OPERATIONS } from './gateway-vocabulary';
import { PAYOUT_FLOW, payoutFlow } from './payout.flow';
import { payoutPolicy } from './policy';

/** The queries of the payouts' gauges (the `(flow, status)` index). */
export const PAYOUT_GAUGE_SQL = {
  awaitingApproval: `SELECT count(*)::int AS n FROM sagas WHERE flow = $1 AND status = $2`,
} as const;

const AWAITING_APPROVAL: PayoutStatus = 'registered';

/** Payouts: one-step (payout, v4, form) and two-step (check → approval → pay). */
export const payoutModule: FlowModule = {
  name: PAYOUT_FLOW,
  family: PAYOUT_FAMILY,
  flow: (config) => payoutFlow(payoutPolicy(config)),
  reconciliation: requestReconciliation<PayoutState & { clientOrderId?: string }>(
    lifecycleEvents('payout-', {
      requested: 'payout-requested',
      // payout-registered: the gateway approved the payout-check (nothing paid yet).
      succeeded: ['payout-registered', 'paid-out'],
      opensOrder: (operation) => opensPayoutOrder(operation as PayoutOperation),
    }),
    payoutExpectation,
    PAYOUT_OPERATIONS,
  ),

  // A registration (payout-registered) pays nothing yet.
  moneyEvents: ['paid-out'] satisfies ReadonlyArray<MoneyEventType<PayoutEvent>>,
  actions: {
    ...refreshActions('refresh-payout-status', 'payoutId'),
    approve: (saga, input, base) => ({
      type: 'approve-payout',
      ...base,
      payoutId: saga.id,
      approvedBy: input.actor,
      // Four eyes: the second approval of a large payout needs the approver role (the decider's rule).
      approverRole: input.role,
      reason: input.reason,
    }),
    reject: (saga, input, base) => ({
      type: 'reject-payout',
      ...base,
      payoutId: saga.id,
      rejectedBy: input.actor,
      reason: input.reason,
    }),
  },
  gauges: [
    {
      name: 'orchestrator_payouts_awaiting_approval',
      help: 'Two-step payouts registered by the gateway and awaiting approve-payout or reject-payout',
      read: async (query) => {
        const [row] = await query<{ n: number }>(PAYOUT_GAUGE_SQL.awaitingApproval, [
          PAYOUT_FLOW,
          AWAITING_APPROVAL,
        ]);
        return [{ value: row?.n ?? 0 }];
      },
    },
  ],
};
