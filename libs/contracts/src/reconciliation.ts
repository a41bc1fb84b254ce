import { z } from 'zod';
import { GatewaySerial } from './operation-events';
import { GatewayStatus, Instant, Money, Uuid } from './primitives';

/**
 * Reconciliation: for a time window, each settled operation of each saga that moves
 * money is compared with the gateway's status reply about that very request (by its serial
 * number; the order's latest request when no serial is known). A run starts on a schedule (the orchestrator's
 * own timer) or on demand with a `reconcile` command on `payments.reconciliation.commands.v1`; what
 * it finds is published on `payments.reconciliation.v1` (key: the run id): one
 * `reconciliation-mismatch` per operation that differs, then one `reconciliation-completed`.
 */

const EndpointId = z.string().min(1).max(64);

/** What a gateway status reply said about one order, as a reconciliation event repeats it. */
const GatewaySide = z.strictObject({
  status: GatewayStatus.optional(),
  transactionType: z.string().max(32).optional(),
  amount: Money.optional(),
  gatewayOrderId: z.string().max(128).optional(),
  errorCode: z.string().max(64).optional(),
});

/** Start a run over the sagas created in [from, to). Idempotent per runId. */
export const ReconcileCommand = z.strictObject({
  type: z.literal('reconcile'),
  commandId: Uuid,
  /** The run's id; the report events carry it. A repeated command with the same id starts nothing. */
  runId: Uuid,
  from: Instant,
  to: Instant,
  /** Only this merchant endpoint (default: every endpoint). */
  endpointId: EndpointId.optional(),
  /** Who asked (an operator's name, a job's name). */
  requestedBy: z.string().min(1).max(128),
  occurredAt: Instant,
});
export type ReconcileCommand = z.infer<typeof ReconcileCommand>;

/**
 * What a check found, other than a match:
 *  - charged-but-reported-declined: the gateway approved the money operation we reported failed;
 *  - reported-charged-but-not: we reported money moved, the gateway says declined/error/filtered;
 *  - operation-differs: both succeeded, but the gateway's last operation on the order is not the
 *    one we recorded last (e.g. a return we never saw);
 *  - amount-differs: same operation and outcome, another amount;
 *  - no-trace-at-gateway: we reported money moved, the gateway knows no such order;
 *  - unknown-over-an-hour: our outcome has been unknown for over an hour (the gateway's answer,
 *    if any, is in `gateway`);
 *  - unresolved: the gateway gave no usable answer within the run's attempts;
 *  - paid-twice: the gateway approved our order, and its status reply for our client order id
 *    names another order, also approved for money (a second charge or payout for one payment):
 *    `gateway` is the reply about our order, `otherOrder` the reply about the other one.
 */
export const MismatchKind = z.enum([
  'charged-but-reported-declined',
  'reported-charged-but-not',
  'operation-differs',
  'amount-differs',
  'no-trace-at-gateway',
  'unknown-over-an-hour',
  'unresolved',
  'paid-twice',
]);
export type MismatchKind = z.infer<typeof MismatchKind>;
export const MISMATCH_KINDS: readonly MismatchKind[] = MismatchKind.options;

export const ReconciliationMismatch = z.strictObject({
  type: z.literal('reconciliation-mismatch'),
  runId: Uuid,
  sagaId: Uuid,
  flow: z.string().min(1).max(64),
  endpointId: EndpointId,
  kind: MismatchKind,
  /**
   * What the saga reported: its status, the operation checked and (for an operation that opens
   * the order) its amount. `basis` `request`: that very request, asked by the gateway's serial
   * number of it (`serial`; `requestId` is ours); `latest-operation`: no serial known, the saga's
   * last operation against the order's latest request.
   */
  ours: z.strictObject({
    status: z.string().min(1).max(64),
    operation: z.string().min(1).max(32),
    amount: Money.optional(),
    basis: z.enum(['request', 'latest-operation']).optional(),
    requestId: Uuid.optional(),
    serial: GatewaySerial.optional(),
  }),
  /** What the gateway answered about the order (absent: no usable answer). */
  gateway: GatewaySide.optional(),
  /** paid-twice only: the gateway's status reply about the other order under our client order id. */
  otherOrder: GatewaySide.optional(),
  detectedAt: Instant,
});
export type ReconciliationMismatch = z.infer<typeof ReconciliationMismatch>;

export const ReconciliationCompleted = z.strictObject({
  type: z.literal('reconciliation-completed'),
  runId: Uuid,
  trigger: z.enum(['scheduled', 'on-demand']),
  requestedBy: z.string().min(1).max(128),
  from: Instant,
  to: Instant,
  endpointId: EndpointId.optional(),
  /**
   * Operations checked (a saga may have several: a sale and its returns, say): `matched` +
   * `mismatched` + `unanswered` + `handedToSagas`.
   */
  checked: z.number().int().min(0),
  matched: z.number().int().min(0),
  mismatched: z.number().int().min(0),
  /** Mismatches by kind (kinds with none are left out). */
  byKind: z.partialRecord(MismatchKind, z.number().int().min(1)),
  /**
   * Checked, neither matched nor mismatched: the gateway refused the status query for another
   * reason than "no such order" (an authentication failure, say) through all the run's attempts —
   * inconclusive, no mismatch event. Absent on runs completed before it was counted.
   */
  unanswered: z.number().int().min(0).optional(),
  /**
   * Checked, neither matched nor mismatched: the gateway's final answer about the very request a
   * saga waited for (its outcome unknown), handed to that saga as an ordinary status reply — the
   * saga's own rules settle it, and its events say how. Absent on runs completed before.
   */
  handedToSagas: z.number().int().min(0).optional(),
  startedAt: Instant,
  completedAt: Instant,
});
export type ReconciliationCompleted = z.infer<typeof ReconciliationCompleted>;

export const ReconciliationEvent = z.discriminatedUnion('type', [
  ReconciliationMismatch,
  ReconciliationCompleted,
]);
export type ReconciliationEvent = z.infer<typeof ReconciliationEvent>;
