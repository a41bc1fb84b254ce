import { z } from 'zod';
import { Customer, BillingAddress, BrowserInfo } from './commands';
import { GatewaySerial } from './operation-events';
import { GatewayCardRefId } from './pan-eligibility';
import {
  CardSummary,
  GatewayOperation,
  GatewayStatus,
  Instant,
  MerchantRef,
  Money,
  SealedCard,
  SubjectOperation,
  Uuid,
} from './primitives';

/**
 * Messages between the orchestrator and the gateway-adapter, and from callback-ingest.
 *  - `payments.gateway.requests.v1`: GatewayRequest (orchestrator → adapter)
 *  - `payments.gateway.results.v1`: GatewayResult (adapter → orchestrator)
 *  - `payments.gateway.callbacks.v1`: GatewayCallback | StatusCheckHint (callback-ingest → orchestrator)
 */

const ClientOrderId = z.string().min(1).max(128);
const GatewayOrderId = z.string().min(1).max(128);

const requestBase = {
  /** Stable id of this one intended operation; a resend keeps it, so the adapter can deduplicate. */
  requestId: Uuid,
  paymentId: Uuid,
  merchant: MerchantRef,
  /** `client_orderid`: unique per endpoint, the same for every resend. */
  clientOrderId: ClientOrderId,
  /** 1 for the first send; a resend after a not-sent result counts up. */
  attempt: z.number().int().min(1),
  requestedAt: Instant,
  /**
   * The adapter may send this attempt although an earlier attempt is in its at-most-once ledger.
   * Set on the one resend of a request the gateway showed no trace of for the whole safe window
   * (operation-resent), and on a create-card-ref or get-card-info asked again after a lost reply
   * (the gateway answers a repeat of either the same way: one reference per order, or a read).
   * Every other resend follows a proven not-sent and needs no flag.
   */
  afterNoTrace: z.literal(true).optional(),
};

/** The order and the payer of a sale or preauth, direct or on a hosted form. */
const orderAndPayer = {
  amount: Money,
  orderDescription: z.string().min(1).max(65535),
  merchantData: z.string().max(1024).optional(),
  customer: Customer,
  billingAddress: BillingAddress,
  redirectUrl: z.url(),
};

/**
 * A gateway request: its operation (or the operations that share its fields), the fields every
 * request carries, then its own, in that order.
 */
function request<O extends z.ZodType<string>, S extends z.ZodRawShape>(operation: O, shape: S) {
  return z.strictObject({ operation, ...requestBase, ...shape });
}

export const GatewaySaleRequest = request(z.enum(['sale', 'preauth']), {
  ...orderAndPayer,
  browser: BrowserInfo.optional(),
  sealedCard: SealedCard,
});
export type GatewaySaleRequest = z.infer<typeof GatewaySaleRequest>;

/** A request about the order an earlier request opened at the gateway (its `orderid`). */
const orderRef = { gatewayOrderId: GatewayOrderId };

/** Capture, void and return reference the original transaction (`orderid`). */
export const GatewayFollowUpRequest = request(z.enum(['capture', 'void', 'return']), {
  ...orderRef,
  /** Absent means the whole amount (full capture, whole void, full return). */
  amount: Money.optional(),
  comment: z.string().max(50).optional(),
});
export type GatewayFollowUpRequest = z.infer<typeof GatewayFollowUpRequest>;

/**
 * Who gets a status query first when the endpoint's status budget is short (the adapter admits by
 * it, the orchestrator's poll cadence sets it; docs/design.md "Status queries"):
 *  - `urgent`: money may have just moved — an outcome answered unknown (and its one resend), a
 *    verified callback or browser return hinting at a change, an operator's refresh;
 *  - `routine`: a fresh operation's polls (sent less than a minute ago);
 *  - `payer`: an operation waiting for a person (3-D Secure, a hosted form), asked slowly;
 *  - `background`: a long-unknown or long-processing operation, an alerted one, reconciliation.
 * Absent: `routine`.
 */
export const StatusPriority = z.enum(['urgent', 'routine', 'payer', 'background']);
export type StatusPriority = z.infer<typeof StatusPriority>;

/**
 * Status query for an earlier request (`subjectRequestId`). With `subjectSerial` (the gateway's
 * serial number of that request, once its reply named one) it asks about exactly that request
 * (`by-request-sn`); without it the gateway describes the order's latest request.
 */
export const GatewayStatusRequest = request(z.literal('status'), {
  subjectRequestId: Uuid,
  subjectOperation: SubjectOperation,
  gatewayOrderId: GatewayOrderId.optional(),
  subjectSerial: GatewaySerial.optional(),
  /** Its class in the endpoint's status budget (absent: `routine`). */
  priority: StatusPriority.optional(),
  /**
   * For an `urgent` query made so by a hint: when the hint came (the verified callback or browser
   * return that hinted at a change, an operator's refresh); absent when its urgency is its
   * operation's age (a reply lost). Echoed on a held query's result, so the query asked again
   * stays urgent for as long after the hint as any hinted poll, and no longer: a hold does not
   * start the urgency again (issue #38).
   */
  urgentSince: Instant.optional(),
});
export type GatewayStatusRequest = z.infer<typeof GatewayStatusRequest>;

/** What a payout request carries besides the common fields: amount, sealed card, description. */
const payoutDestination = {
  amount: Money,
  sealedCard: SealedCard,
  orderDescription: z.string().min(1).max(65535).optional(),
  purpose: z.string().min(1).max(128).optional(),
};

/**
 * First step of the two-step payout (v4 payout-check): registers the payout to the sealed
 * destination card, nothing paid. The card is sealed with the payout id (`paymentId`) as
 * associated data.
 */
export const GatewayPayoutCheckRequest = request(z.literal('payout-check'), payoutDestination);
export type GatewayPayoutCheckRequest = z.infer<typeof GatewayPayoutCheckRequest>;

/**
 * One-step payout to the sealed destination card: v2 `payout` (OAuth HMAC-SHA1) or v4 `payout`
 * (`payout-v4`, OAuth RSA-SHA256). Money leaves when it is approved.
 */
export const GatewayPayoutRequest = request(z.enum(['payout', 'payout-v4']), payoutDestination);
export type GatewayPayoutRequest = z.infer<typeof GatewayPayoutRequest>;

/**
 * Hosted payout form (v2 payout-form, OAuth HMAC-SHA1): the payee enters the destination card on
 * the gateway's page; the reply carries the form URL (`redirectUrl` of the accepted result).
 */
export const GatewayPayoutFormRequest = request(z.literal('payout-form'), {
  amount: Money,
  redirectUrl: z.url(),
  orderDescription: z.string().min(1).max(65535).optional(),
  purpose: z.string().min(1).max(128).optional(),
});
export type GatewayPayoutFormRequest = z.infer<typeof GatewayPayoutFormRequest>;

/**
 * v4 transfer (from `sealedCard`, the source card with its CVV) or v4 transfer-by-ref (no source
 * card) to the sealed destination card. Both cards are sealed with the transfer id.
 */
export const GatewayTransferRequest = request(z.enum(['transfer', 'transfer-by-ref']), {
  amount: Money,
  sealedCard: SealedCard.optional(),
  sealedDestinationCard: SealedCard,
  orderDescription: z.string().min(1).max(65535).optional(),
});
export type GatewayTransferRequest = z.infer<typeof GatewayTransferRequest>;

/** v2 pan-eligibility/send: can the card behind the gateway card reference receive payouts? */
export const GatewayPanEligibilityRequest = request(z.literal('pan-eligibility'), {
  cardRefId: GatewayCardRefId,
});
export type GatewayPanEligibilityRequest = z.infer<typeof GatewayPanEligibilityRequest>;

/** Second step (v4 payout-pay): executes the payout registered under `gatewayOrderId`. */
export const GatewayPayoutPayRequest = request(z.literal('payout-pay'), orderRef);
export type GatewayPayoutPayRequest = z.infer<typeof GatewayPayoutPayRequest>;

/** The gateway's id of a registered recurring payment (`recurring-payment-id`). */
const RecurringPaymentId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a recurring payment id');

/** A card reference id at the gateway (`cardrefid`): a reference only, never card data. */
const CardRefId = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'the gateway card reference id');

/**
 * make-rebill: a charge of a card reference with the cardholder absent. A payment of
 * its own (`clientOrderId` = its payment id); no card data travels, only the reference id.
 */
export const GatewayRebillRequest = request(z.literal('rebill'), {
  cardRefId: CardRefId,
  amount: Money,
  orderDescription: z.string().min(1).max(65535),
});
export type GatewayRebillRequest = z.infer<typeof GatewayRebillRequest>;

/**
 * v4 create-recurring-payment: registers a schedule on a card reference with the
 * gateway, which then charges it on its own clock (`clientOrderId` = the schedule id). The
 * gateway's calendar knows day, week and month periods (a yearly schedule is sent as 12 × its
 * interval months), a start date and a number of charges (`repeats`; absent: until stopped at
 * the gateway). Time of day and time zone are the gateway's.
 */
export const GatewayCreateRecurringPaymentRequest = request(z.literal('create-recurring-payment'), {
  cardRefId: CardRefId,
  amount: Money,
  period: z.enum(['day', 'week', 'month']),
  interval: z.number().int().min(1).max(999),
  /** YYYY-MM-DD: the first charge's date. */
  startDate: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
  repeats: z.number().int().min(1).max(9999).optional(),
  orderDescription: z.string().min(1).max(65535),
});
export type GatewayCreateRecurringPaymentRequest = z.infer<
  typeof GatewayCreateRecurringPaymentRequest
>;

/**
 * create-card-ref after a successful sale or preauth (`gatewayOrderId` = its orderid). Whether it
 * is signed with v2 control or v4 RSA-SHA256 is the adapter's per-endpoint setting.
 */
export const GatewayCardRefRequest = request(z.literal('create-card-ref'), orderRef);
export type GatewayCardRefRequest = z.infer<typeof GatewayCardRefRequest>;

/** get-card-info of a card reference (read-only). */
export const GatewayCardInfoRequest = request(z.literal('get-card-info'), {
  cardRefId: CardRefId,
});
export type GatewayCardInfoRequest = z.infer<typeof GatewayCardInfoRequest>;

/** A hosted form: no card; the reply carries the form URL for the payer. */
export const GatewayHostedFormRequest = request(
  z.enum(['sale-form', 'preauth-form', 'payment-form']),
  orderAndPayer,
);
export type GatewayHostedFormRequest = z.infer<typeof GatewayHostedFormRequest>;

const verification = {
  orderDescription: z.string().min(1).max(65535),
  customer: Customer,
  billingAddress: BillingAddress,
};

/** Account verification (zero amount) with the sealed card. */
export const GatewayAccountVerificationRequest = request(z.literal('account-verification'), {
  ...verification,
  redirectUrl: z.url().optional(),
  sealedCard: SealedCard,
});
export type GatewayAccountVerificationRequest = z.infer<typeof GatewayAccountVerificationRequest>;

/** Account verification on the gateway's hosted page. */
export const GatewayAccountVerificationFormRequest = request(
  z.literal('account-verification-form'),
  {
    ...verification,
    redirectUrl: z.url(),
  },
);
export type GatewayAccountVerificationFormRequest = z.infer<
  typeof GatewayAccountVerificationFormRequest
>;

/** 3-D Secure uploads about the payment's order (`gatewayOrderId`). */
export const GatewayUploadMethodUrlResultRequest = request(z.literal('upload-method-url-result'), {
  ...orderRef,
  threeDSCompInd: z.enum(['Y', 'N', 'U']),
  threeDSServerTransID: z.string().min(1).max(36).optional(),
  browser: BrowserInfo.optional(),
});
export type GatewayUploadMethodUrlResultRequest = z.infer<
  typeof GatewayUploadMethodUrlResultRequest
>;
export const GatewayUploadCresResultRequest = request(z.literal('upload-cres-result'), {
  ...orderRef,
  cRes: z.string().min(1).max(4096),
});
export type GatewayUploadCresResultRequest = z.infer<typeof GatewayUploadCresResultRequest>;
export const GatewayUploadParesResultRequest = request(z.literal('upload-pares-result'), {
  ...orderRef,
  paRes: z.string().min(1).max(16384),
});
export type GatewayUploadParesResultRequest = z.infer<typeof GatewayUploadParesResultRequest>;

/**
 * Every request schema of `payments.gateway.requests.v1`, by its published name: the union
 * below, the AsyncAPI document's request messages and the check that every operation has a
 * request are all read from this one table.
 */
export const GATEWAY_REQUEST_SCHEMAS = {
  GatewaySaleRequest,
  GatewayFollowUpRequest,
  GatewayStatusRequest,
  GatewayPayoutCheckRequest,
  GatewayPayoutPayRequest,
  GatewayRebillRequest,
  GatewayCardRefRequest,
  GatewayCardInfoRequest,
  GatewayHostedFormRequest,
  GatewayAccountVerificationRequest,
  GatewayAccountVerificationFormRequest,
  GatewayUploadMethodUrlResultRequest,
  GatewayUploadCresResultRequest,
  GatewayUploadParesResultRequest,
  GatewayPayoutRequest,
  GatewayPayoutFormRequest,
  GatewayTransferRequest,
  GatewayPanEligibilityRequest,
  GatewayCreateRecurringPaymentRequest,
} as const;

type RequestSchema = (typeof GATEWAY_REQUEST_SCHEMAS)[keyof typeof GATEWAY_REQUEST_SCHEMAS];

export const GatewayRequest = z.discriminatedUnion(
  'operation',
  Object.values(GATEWAY_REQUEST_SCHEMAS) as [RequestSchema, ...RequestSchema[]],
);
export type GatewayRequest = z.infer<typeof GatewayRequest>;

/** The compiler refuses an operation no request schema carries (and a schema of no operation). */
type SameSet<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
true satisfies SameSet<GatewayRequest['operation'], GatewayOperation>;

/** The operations a request schema carries (its `operation` literal or enum). */
export function requestOperations(schema: RequestSchema): readonly GatewayOperation[] {
  const operation = schema.shape.operation as z.ZodType;
  if (operation instanceof z.ZodLiteral) return [...operation.values] as GatewayOperation[];
  if (operation instanceof z.ZodEnum) return operation.options as GatewayOperation[];
  throw new Error('a gateway request without an operation literal or enum');
}

/**
 * What the gateway says about a transaction: the reply to a status query, the body of a
 * synchronous reply, or a verified callback. `html` / `redirectUrl` come with `processing` when
 * the payer must act (3-D Secure, hosted form).
 */
export const GatewayStatusReport = z.strictObject({
  status: GatewayStatus,
  gatewayOrderId: GatewayOrderId.optional(),
  /** As reported by the gateway, converted to minor units at the edge. */
  amount: Money.optional(),
  /**
   * The gateway sent an amount that cannot be read as minor units of a known currency (`eur`,
   * `7,000.00`, `70.005` USD, no currency or an unknown one): its text as sent, never a number,
   * so "present but unreadable" is never mistaken for "no amount" (an approval naming it raises
   * `amount-mismatch`). Absent whenever `amount` is set.
   */
  unreadableAmount: z
    .strictObject({
      amount: z.string().min(1).max(64),
      currency: z.string().min(1).max(16).optional(),
    })
    .optional(),
  /** `transaction-type` / callback `type`: sale, preauth, capture, reversal, chargeback, … */
  transactionType: z.string().max(32).optional(),
  /**
   * A status reply's `by-request-sn`: the serial number of the request of the order it describes
   * (the one asked for, or the order's latest). Callbacks and synchronous replies carry none.
   */
  requestSerial: GatewaySerial.optional(),
  html: z.string().min(1).max(65536).optional(),
  redirectUrl: z.url().optional(),
  /** 3-D Secure 2.x method step: the method URL and the 3DS server transaction id. */
  threeDSMethod: z
    .strictObject({ url: z.url(), threeDSServerTransID: z.string().min(1).max(36) })
    .optional(),
  approvalCode: z.string().max(64).optional(),
  errorCode: z.string().max(64).optional(),
  errorMessage: z.string().max(1024).optional(),
  card: CardSummary.optional(),
});
export type GatewayStatusReport = z.infer<typeof GatewayStatusReport>;

/**
 * The adapter's classification of one request (STYLE.md practice 4):
 *  - accepted: the gateway took it (`report` when the reply already says more than "processing",
 *    `redirectUrl` for hosted forms);
 *  - rejected: the gateway refused it (validation error); nothing happened;
 *  - not-sent: it provably never left (breaker open, rate limited, connect refused); safe to resend;
 *  - unknown: it may have been processed (timeout, 5xx, connection lost after sending).
 */
export const GatewayClassification = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('accepted'),
    gatewayOrderId: GatewayOrderId.optional(),
    /**
     * The gateway's serial number of this request (its reply's `serial-number`); absent for a
     * status query, whose report names the request it describes (`requestSerial`).
     */
    serialNumber: GatewaySerial.optional(),
    report: GatewayStatusReport.optional(),
    redirectUrl: z.url().optional(),
    /**
     * create-card-ref: the new reference; get-card-info: the reference and what is kept of its
     * card (BIN, last four, brand — never the number, expiry or holder name).
     */
    cardReference: z
      .strictObject({ refId: CardRefId.optional(), card: CardSummary.optional() })
      .optional(),
    /**
     * create-recurring-payment, or a status reply about a registration: the gateway's id of the
     * recurring payment (`recurring-payment-id`).
     */
    recurringPaymentId: RecurringPaymentId.optional(),
  }),
  z.strictObject({
    kind: z.literal('rejected'),
    code: z.string().max(64),
    message: z.string().max(1024),
    /**
     * A status query the gateway refused because it has no such order (not because of the
     * query's credentials or form): the one answer that says a request opening an order never
     * arrived.
     */
    orderUnknown: z.literal(true).optional(),
  }),
  z.strictObject({
    kind: z.literal('not-sent'),
    reason: z.string().max(256),
    /**
     * Set when our own circuit breaker, rate limit or concurrency limit held the request back: the
     * earliest instant a resend can go out (the breaker half-opens, a token is due). The saga waits
     * for it (bounded) instead of spending its send attempts inside the cool-down.
     */
    retryAt: Instant.optional(),
  }),
  z.strictObject({
    kind: z.literal('unknown'),
    reason: z.string().max(256),
  }),
]);
export type GatewayClassification = z.infer<typeof GatewayClassification>;

export const GatewayResult = z.strictObject({
  requestId: Uuid,
  paymentId: Uuid,
  operation: GatewayOperation,
  /** For `status`: the request whose status was asked. */
  subjectRequestId: Uuid.optional(),
  attempt: z.number().int().min(1),
  result: GatewayClassification,
  /**
   * For a `status` query the adapter held back (`not-sent`) or the gateway did not answer
   * (`unknown`: a 5xx, a timeout): the class it was asked in (its request's `priority`), so that
   * it is asked again in it — a query a verified callback made urgent stays urgent, rather than
   * taking the class its operation's age gives it, and a hinted one is asked again within
   * seconds (issue #38). Absent on every other result, and when the request named no class.
   */
  priority: StatusPriority.optional(),
  /** For such a `status` query: its request's `urgentSince`, echoed like `priority`. */
  urgentSince: Instant.optional(),
  completedAt: Instant,
  /**
   * When the adapter got the gateway's HTTP answer (an accepted or rejected reply; absent when
   * the gateway did not answer: not-sent, unknown, or an answer of the adapter's own). The
   * gateway's replies carry no time of their own, so this is the answer's time; `completedAt`
   * is when the result was published, later for a handed-off request. The orchestrator measures
   * time to truth from it.
   */
  answeredAt: Instant.optional(),
});
export type GatewayResult = z.infer<typeof GatewayResult>;

const notification = {
  /** Stable id of the notification (e.g. hash of the verified parameters), for inbox dedupe. */
  notificationId: z.string().min(1).max(128),
  paymentId: Uuid,
};

/** A server callback (or browser return) whose checksum callback-ingest verified. */
export const GatewayCallback = z.strictObject({
  kind: z.literal('callback'),
  ...notification,
  clientOrderId: ClientOrderId,
  source: z.enum(['server-callback', 'browser-return']),
  report: GatewayStatusReport.extend({ gatewayOrderId: GatewayOrderId }),
  /** When callback-ingest received it: the answer's time (time to truth is measured from it). */
  receivedAt: Instant,
});
export type GatewayCallback = z.infer<typeof GatewayCallback>;

/** A callback that failed verification or carried too little: changes nothing, may prompt a status query. */
export const StatusCheckHint = z.strictObject({
  kind: z.literal('status-check-hint'),
  ...notification,
  reason: z.enum(['checksum-mismatch', 'incomplete', 'browser-return']),
  receivedAt: Instant,
});
export type StatusCheckHint = z.infer<typeof StatusCheckHint>;

export const CallbackMessage = z.discriminatedUnion('kind', [GatewayCallback, StatusCheckHint]);
export type CallbackMessage = z.infer<typeof CallbackMessage>;
