import type {
  CardSummary,
  MerchantRef,
  Money,
  PayerAction,
  PaymentOperation,
} from '@payments/contracts';

/**
 * The payment aggregate (one saga row: state + version).
 *
 * `status` is the lifecycle of the payment itself:
 *  - initial                                   nothing yet
 *  - requested → processing → action-required  the sale/preauth is in flight
 *    ↘ outcome-unknown                         sent, outcome unknown: only a status reply or a
 *                                              verified callback resolves it, never a timeout
 *  - approved (sale) | authorized (preauth)    final success
 *  - captured                                  (part of) an authorization was captured
 *  - partially-returned | returned | voided    after returns / void
 *  - declined | failed                         final failure of the sale/preauth
 *
 * Capture, void and return are follow-up operations on a successful payment. While one is in
 * flight `status` keeps the financial position (e.g. authorized) and `inFlight` tracks the
 * operation; if it is declined or fails, nothing about the money changed.
 */
export type PaymentStatus =
  | 'initial'
  | 'requested'
  | 'processing'
  | 'action-required'
  | 'outcome-unknown'
  | 'authorized'
  | 'approved'
  | 'captured'
  | 'partially-returned'
  | 'returned'
  | 'voided'
  | 'declined'
  | 'failed';

/** Where the operation in flight stands. */
export type OperationStage = 'requested' | 'processing' | 'action-required' | 'outcome-unknown';

export interface InFlightOperation {
  operation: PaymentOperation;
  /** Stable across resends; status replies and results are matched on it. */
  requestId: string;
  commandId: string;
  amount: Money;
  stage: OperationStage;
  requestedAt: string;
  unknownSince?: string;
  /** The one-hour alert for this unknown outcome was raised. */
  alerted: boolean;
  /** The payer action last announced, so a repeated status reply does not announce it again. */
  action?: PayerAction;
}

export type PaymentKind = 'sale' | 'preauth';

export interface PaymentState {
  status: PaymentStatus;
  /** Version of the last event folded in (0 before the first). */
  version: number;
  paymentId?: string;
  kind?: PaymentKind;
  merchant?: MerchantRef;
  currency?: string;
  /** client_orderid of the sale/preauth: the payment id, unique per endpoint and stable. */
  clientOrderId?: string;
  /** orderid the gateway gave the sale/preauth; capture, void and return reference it. */
  gatewayOrderId?: string;
  /** Minor units. Invariants: captured ≤ authorized; returned ≤ captured, or = authorized when a return released an uncaptured hold. */
  authorized: number;
  captured: number;
  returned: number;
  holdReleased: boolean;
  holdExpired: boolean;
  card?: CardSummary;
  inFlight?: InFlightOperation;
}

export const initialState: PaymentState = Object.freeze({
  status: 'initial',
  version: 0,
  authorized: 0,
  captured: 0,
  returned: 0,
  holdReleased: false,
  holdExpired: false,
});

export const FINAL_STATUSES: readonly PaymentStatus[] = [
  'authorized',
  'approved',
  'captured',
  'partially-returned',
  'returned',
  'voided',
  'declined',
  'failed',
];

/** The sale/preauth has its outcome (follow-up operations may still come). */
export function isSettled(state: PaymentState): boolean {
  return FINAL_STATUSES.includes(state.status);
}

export function isMainOperation(operation: PaymentOperation): operation is PaymentKind {
  return operation === 'sale' || operation === 'preauth';
}
