import type {
  ScheduleOnNewCardRef,
  CardRef,
  CardSummary,
  MerchantRef,
  Money,
  PayerAction,
  PaymentOperation,
  UnknownConcern,
} from '@payments/contracts';

import type { DecidedOperation } from '../../../domain/gateway-operation/decided-operation';
import type { SerialPending } from '../../../domain/gateway-operation/operation-serial';

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
export type PaymentStatus = 'initial' | OperationStage | SucceededStatus | FailedPayment['status'];

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
  /** Sent once more because the gateway had no trace of it (operation-resent). */
  resent?: boolean;
  /** The gateway's serial number of this request, once a reply named it. */
  serial?: string;
  /** Why a person must look at this unknown outcome (no trace, amount mismatch). */
  concern?: UnknownConcern;
  /** The payer enters the card on the gateway's hosted page, whose address the reply brings. */
  via?: 'hosted-form';
  /** The gateway decides the transaction (payment-form): its answer names sale or preauth. */
  transactionByGateway?: true;
  /**
   * A follow-up asked while the sale's or preauth's serial was still asked for (`serialPending`):
   * its request is written, not published, until that question closes (decide-serial.ts).
   */
  held?: true;
}

/** `rebill`: a charge of a card reference with the cardholder absent (a sale without a card). */
export type PaymentKind = 'sale' | 'preauth' | 'rebill' | 'account-verification';

/** The schedule cycle a rebill charges (the schedule is told its outcome). */
export interface ScheduleLink {
  scheduleId: string;
  cycle: number;
  attempt: number;
}

/** A create-card-ref or get-card-info sent and not answered yet (one at a time). */
export interface CardRefRequest {
  operation: 'create-card-ref' | 'get-card-info';
  requestId: string;
  commandId: string;
  requestedAt: string;
  /** create-card-ref: the schedule to start on the new reference. */
  schedule?: ScheduleOnNewCardRef;
  /** Its reply was lost (since then): asked again until answered. */
  unknownSince?: string;
  /** The unknown-outcome alert was raised for it. */
  alerted?: boolean;
}

/** Money positions every state carries (minor units; zero before anything happened). */
interface Balances {
  /** Version of the last event folded in (0 before the first). */
  version: number;
  /** Invariants: captured ≤ authorized; returned ≤ captured, or = authorized when a return released an uncaptured hold. */
  authorized: number;
  captured: number;
  returned: number;
  holdReleased: boolean;
  holdExpired: boolean;
}

/** What is known of every payment once its sale/preauth was requested. */
interface PaymentFacts extends Balances {
  paymentId: string;
  kind: PaymentKind;
  merchant: MerchantRef;
  currency: string;
  /** client_orderid of the sale/preauth: the payment id, unique per endpoint and stable. */
  clientOrderId: string;
  /** orderid the gateway gave the sale/preauth; capture, void and return reference it. */
  gatewayOrderId?: string;
  /** The gateway's serial numbers of the order's settled requests (sale, captures, returns …). */
  requestSerials?: readonly string[];
  card?: CardSummary;
  /** The card reference: the one a rebill charges, or the one created from this payment. */
  cardRef?: CardRef;
  /** A rebill started by a recurring schedule. */
  schedule?: ScheduleLink;
  cardRefRequest?: CardRefRequest;
  /**
   * The last operation settled by a decision of two people (a case, `settled-by-decision`): a
   * later gateway answer about that request that contradicts it reopens the case.
   */
  decided?: DecidedOperation;
  /**
   * The sale, preauth or rebill succeeded before any reply named its serial (a verified callback
   * settled it): the serial is asked for, and follow-ups wait (domain/gateway-operation/operation-serial.ts).
   */
  serialPending?: SerialPending<PaymentOperation>;
}

/** Nothing requested yet. */
export interface InitialPayment extends Balances {
  status: 'initial';
  inFlight?: undefined;
}

/** The sale/preauth itself is in flight. */
export interface PendingPayment extends PaymentFacts {
  status: OperationStage;
  inFlight: InFlightOperation;
}

export type SucceededStatus =
  | 'authorized'
  | 'approved'
  | 'captured'
  | 'partially-returned'
  | 'returned'
  | 'voided'
  /** An account verification was approved (zero amount, nothing charged). */
  | 'verified';

/** The sale/preauth succeeded; a capture, void or return may be in flight. */
export interface SucceededPayment extends PaymentFacts {
  status: SucceededStatus;
  inFlight?: InFlightOperation;
}

/** The sale/preauth ended without money moving. */
export interface FailedPayment extends PaymentFacts {
  status: 'declined' | 'failed';
  inFlight?: undefined;
}

/**
 * The payment aggregate as a discriminated union on `status`: a state that names a payment always
 * has its id, kind, merchant, currency and client order id; only a pending one always has an
 * operation in flight; a failed one never has.
 */
export type PaymentState = InitialPayment | PendingPayment | SucceededPayment | FailedPayment;

/** Every state after the sale/preauth was requested. */
export type OpenPayment = Exclude<PaymentState, InitialPayment>;

export const initialState: InitialPayment = Object.freeze({
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
  'verified',
];

/** The sale/preauth has its outcome (follow-up operations may still come). */
export function isSettled(state: PaymentState): state is SucceededPayment | FailedPayment {
  return FINAL_STATUSES.includes(state.status);
}

export function isOpen(state: PaymentState): state is OpenPayment {
  return state.status !== 'initial';
}

export function isMainOperation(operation: PaymentOperation): operation is PaymentKind {
  return (
    operation === 'sale' ||
    operation === 'preauth' ||
    operation === 'rebill' ||
    operation === 'account-verification'
  );
}

/**
 * A deferred resend (not-sent, then `notBefore`) still applies only while that request is the one
 * in flight and nothing came back from the gateway for it: not answered yet, or sent once more
 * after no trace (`operation-resent`, which leaves it unknown) and not acknowledged since.
 */
export function resendStillWanted(state: PaymentState, requestId: string): boolean {
  const op = state.inFlight;
  return (
    op?.requestId === requestId &&
    (op.stage === 'requested' || (op.resent === true && op.stage === 'outcome-unknown'))
  );
}
