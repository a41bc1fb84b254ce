import {
  CardSummary,
  GatewayCallback,
  type GatewayStatusReport,
  StatusCheckHint,
  Uuid,
} from '@payments/contracts';
import {
  type CallbackNotification,
  GatewayClientError,
  parseCallback,
  verifyCallbackControl,
} from '@payments/payment-gateway';
import { maskCardNumbers } from '@payments/core';
import { type CallbackSource, notificationId } from './notification-id';

/** Stable codes of a refused notification; the HTTP layer maps them to statuses. */
export type RejectionCode =
  'missing-control' | 'checksum-mismatch' | 'malformed-callback' | 'unknown-merchant-order';

export interface IngestInput {
  readonly endpointId: string;
  readonly source: CallbackSource;
  /** Every parameter as received (query and form body merged). */
  readonly params: Readonly<Record<string, string>>;
  readonly controlKey: string;
  /** ISO 8601 instant. */
  readonly receivedAt: string;
}

export type IngestDecision =
  | { readonly kind: 'publish'; readonly message: GatewayCallback }
  | {
      readonly kind: 'reject';
      readonly code: RejectionCode;
      readonly message: string;
      /** The payment the notification names, when `merchant_order` is a UUID (not verified!). */
      readonly paymentId?: string;
      /** A status-check hint the orchestrator may act on, subject to the rate limit. */
      readonly hint?: StatusCheckHint;
    };

const MAX_ERROR_MESSAGE = 1024;

function isUuid(value: string | undefined): value is string {
  return value !== undefined && Uuid.safeParse(value).success;
}

/**
 * The saga a merchant order names: our payment ids are UUIDs; a charge the gateway makes on a
 * schedule registered with it (create-recurring-payment, client order id = the schedule id) is
 * named `<schedule id>-<n>` (the sandbox's convention; the facts do not say what the real gateway
 * sends), which names the schedule's saga.
 */
function sagaIdOf(orderRef: string | undefined): string | undefined {
  if (isUuid(orderRef)) return orderRef;
  const match = orderRef === undefined ? null : /^(.{36})-([1-9]\d{0,5})$/.exec(orderRef);
  return match !== null && isUuid(match[1]) ? match[1] : undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}

/**
 * What to do with one callback or browser return — pure: the key, the time and the parameters
 * come in as data.
 *
 *  1. `merchant_order` (or `client_orderid`) names the payment when it is a UUID, or a registered
 *     schedule's charge when it is `<UUID>-<n>` (see `sagaIdOf`); both present and different →
 *     malformed.
 *  2. No control → `missing-control`; no status or orderid → `malformed-callback`; a control that
 *     does not match `sha1(status + orderid + merchant_order + key)` (constant-time compare; empty,
 *     wrong-length and non-hex controls never match) → `checksum-mismatch`. Each of these may
 *     prompt a status-check hint when the payment id is a UUID, and changes nothing else.
 *  3. Verified, but `merchant_order` is not one of our payment ids → `unknown-merchant-order`.
 *  4. Verified: parsed into a GatewayCallback (amount in minor units by the currency's exponent).
 *     Unreadable verified content (bad amount, unknown currency) → malformed, with a hint.
 *
 * Only status, orderid and merchant_order are covered by the control: amount, type, error and
 * card fields are carried along as the gateway's word, not as verified facts.
 */
export function decide(input: IngestInput): IngestDecision {
  const { params, source } = input;
  const merchantOrder = nonEmpty(params.merchant_order);
  const clientOrderId = nonEmpty(params.client_orderid);
  const orderRef = merchantOrder ?? clientOrderId;
  const paymentId = sagaIdOf(orderRef);

  const reject = (
    code: RejectionCode,
    message: string,
    hintReason?: StatusCheckHint['reason'],
  ): IngestDecision => ({
    kind: 'reject',
    code,
    message,
    ...(paymentId === undefined ? {} : { paymentId }),
    ...(paymentId === undefined || hintReason === undefined
      ? {}
      : { hint: buildHint(input, paymentId, hintReason) }),
  });

  if (
    merchantOrder !== undefined &&
    clientOrderId !== undefined &&
    merchantOrder !== clientOrderId
  ) {
    return reject('malformed-callback', 'merchant_order and client_orderid differ');
  }
  const control = nonEmpty(params.control);
  if (control === undefined) {
    return reject(
      'missing-control',
      'control is missing',
      source === 'browser-return' ? 'browser-return' : 'incomplete',
    );
  }
  const status = nonEmpty(params.status);
  const orderid = nonEmpty(params.orderid);
  if (status === undefined || orderid === undefined || orderRef === undefined) {
    const missing = [
      status === undefined ? 'status' : undefined,
      orderid === undefined ? 'orderid' : undefined,
      orderRef === undefined ? 'merchant_order' : undefined,
    ].filter((f): f is string => f !== undefined);
    return reject('malformed-callback', `missing ${missing.join(', ')}`, 'incomplete');
  }
  const verified = verifyCallbackControl(
    { status, orderid, merchant_order: orderRef },
    control,
    input.controlKey,
  );
  if (!verified) {
    return reject('checksum-mismatch', 'control does not match', 'checksum-mismatch');
  }
  if (paymentId === undefined) {
    return reject('unknown-merchant-order', 'merchant_order is not a payment id of this service');
  }

  let notification: CallbackNotification;
  const unpriced = unpricedAmount(params);
  try {
    notification = parseCallback(unpriced === undefined ? params : withoutAmount(params));
  } catch (error) {
    const message =
      error instanceof GatewayClientError ? error.message : 'callback could not be read';
    return reject('malformed-callback', message, 'incomplete');
  }
  const candidate: GatewayCallback = {
    kind: 'callback',
    notificationId: notificationId('callback', source, input.endpointId, params),
    paymentId,
    clientOrderId: orderRef,
    source,
    report: {
      ...buildReport(notification),
      ...(unpriced === undefined ? {} : { unreadableAmount: { amount: unpriced } }),
    },
    receivedAt: input.receivedAt,
  };
  const checked = GatewayCallback.safeParse(candidate);
  if (!checked.success) {
    const field = checked.error.issues[0]?.path.join('.') ?? '';
    return reject('malformed-callback', `callback field out of range: ${field}`, 'incomplete');
  }
  return { kind: 'publish', message: checked.data };
}

/**
 * The amount is informational (not covered by the control) and the gateway may omit the
 * currency (facts §6 lists it, older SDKs do not require it): without a currency there is no
 * exponent, so the amount cannot be read as minor units. The verified status is still published,
 * with the amount's text as `unreadableAmount` (never dropped: an approval that names an amount
 * we cannot read is not one at our amount; the orchestrator asks the status reply).
 */
function unpricedAmount(params: Readonly<Record<string, string>>): string | undefined {
  const amount = nonEmpty(params.amount);
  if (amount === undefined || nonEmpty(params.currency) !== undefined) return undefined;
  return maskCardNumbers(amount).slice(0, 64);
}

function withoutAmount(params: Readonly<Record<string, string>>): Readonly<Record<string, string>> {
  const { amount: _amount, ...rest } = params;
  return rest;
}

function buildReport(n: CallbackNotification): GatewayCallback['report'] {
  const report: Record<string, unknown> = {
    status: n.status,
    gatewayOrderId: n.orderid,
  };
  if (n.amountMinor !== undefined && n.currency !== undefined) {
    report.amount = { minor: n.amountMinor, currency: n.currency };
  }
  if (n.type !== undefined && n.type !== '' && n.type.length <= 32) {
    report.transactionType = n.type;
  }
  if (n.approvalCode !== undefined && n.approvalCode.length <= 64) {
    report.approvalCode = n.approvalCode;
  }
  if (n.errorCode !== undefined && n.errorCode.length <= 64) report.errorCode = n.errorCode;
  if (n.errorMessage !== undefined) {
    report.errorMessage = n.errorMessage.slice(0, MAX_ERROR_MESSAGE);
  }
  const card = cardSummary(n);
  if (card !== undefined) report.card = card;
  return report as GatewayStatusReport & { gatewayOrderId: string };
}

/** BIN, last four and brand, each only when it has the contract's shape (never more digits). */
function cardSummary(n: CallbackNotification): CardSummary | undefined {
  const card: Record<string, string> = {};
  if (n.bin !== undefined && CardSummary.shape.bin.safeParse(n.bin).success) card.bin = n.bin;
  if (n.lastFourDigits !== undefined && /^\d{4}$/.test(n.lastFourDigits)) {
    card.lastFour = n.lastFourDigits;
  }
  if (n.cardType !== undefined && n.cardType.length >= 1 && n.cardType.length <= 32) {
    card.brand = n.cardType;
  }
  return Object.keys(card).length === 0 ? undefined : card;
}

function buildHint(
  input: IngestInput,
  paymentId: string,
  reason: StatusCheckHint['reason'],
): StatusCheckHint {
  return {
    kind: 'status-check-hint',
    notificationId: notificationId(
      'status-check-hint',
      input.source,
      input.endpointId,
      input.params,
    ),
    paymentId,
    reason,
    receivedAt: input.receivedAt,
  };
}
