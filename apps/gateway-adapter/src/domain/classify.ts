import {
  type CardSummary,
  GatewayStatusReport,
  type GatewayClassification,
} from '@payments/contracts';
import { maskCardNumbers } from '@payments/core';
import type {
  AsyncFormResponse,
  AsyncResponse,
  CallResult,
  CardInfoResponse,
  CardRefResponse,
  CreateRecurringPaymentResponse,
  GatewayStatus,
  StatusResponse,
} from '@payments/payment-gateway';

/** Reasons the adapter itself answers with, without (or before) a gateway call. */
export const ADAPTER_REASONS = {
  circuitOpen: 'circuit open',
  rateLimited: 'rate-limited',
  concurrencyLimited: 'concurrency limit: no free slot in time',
  statusInFlight: 'status query for this payment already in flight',
  statusRecent: 'status query for this payment sent moments ago',
  statusBudget: 'status budget spent: status queries share a bounded rate',
  statusUrgentFirst: 'status budget: the remaining tokens are kept for urgent status queries',
  statusBackgroundShare: 'status budget: background status queries take a bounded share',
  moneyFirst: 'rate limit: the remaining tokens are kept for money operations',
  queueFull: 'queue limit: too many requests waiting for this endpoint',
  handoffLost:
    'the adapter replica that accepted this request stopped before answering: it may have been sent',
  mayHaveBeenSent:
    'may already have been sent: this request attempt is in the sent-requests ledger',
} as const;

/** Gateway text can echo what it was sent: never let a card number through into a result. */
const clip = (value: string | undefined, max: number): string | undefined =>
  value === undefined || value === '' ? undefined : maskCardNumbers(value).slice(0, max);

function validUrl(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? value : undefined;
  } catch {
    return undefined;
  }
}

function cardOf(reply: {
  bin?: string;
  lastFourDigits?: string;
  cardType?: string;
}): CardSummary | undefined {
  // BIN, last four and brand at most (DESIGN.md guarantee 7); anything malformed is left out.
  const card: CardSummary = {
    ...(reply.bin !== undefined && /^\d{6,8}$/.test(reply.bin) ? { bin: reply.bin } : {}),
    ...(reply.lastFourDigits !== undefined && /^\d{4}$/.test(reply.lastFourDigits)
      ? { lastFour: reply.lastFourDigits }
      : {}),
    ...(reply.cardType ? { brand: reply.cardType.slice(0, 32) } : {}),
  };
  return Object.keys(card).length > 0 ? card : undefined;
}

function strip<T extends Record<string, unknown>>(o: T): T {
  for (const key of Object.keys(o)) if (o[key] === undefined) delete o[key];
  return o;
}

/** The 3-D Secure 2.x method step, when the reply names both its URL and transaction id. */
function threeDSMethodOf(
  reply: StatusResponse,
): { url: string; threeDSServerTransID: string } | undefined {
  const url = validUrl(reply.threeDSMethodUrl);
  const id = clip(reply.threeDSServerTransId, 36);
  return url === undefined || id === undefined ? undefined : { url, threeDSServerTransID: id };
}

/**
 * The amount a reply sent but that cannot be read as minor units of a known currency (`eur`,
 * `7,000.00`, `70.005` USD, no or an unknown currency), as its text: never dropped, since an
 * approval whose amount is unreadable must not read as one that names none.
 */
function unreadableAmountOf(reply: {
  amount?: string;
  currency?: string;
}): GatewayStatusReport['unreadableAmount'] {
  const amount = clip(reply.amount, 64);
  if (amount === undefined) return undefined;
  const currency = clip(reply.currency, 16);
  return currency === undefined ? { amount } : { amount, currency };
}

/** A status-response as the contract's GatewayStatusReport (amount back to minor units). */
export function statusReport(reply: StatusResponse): GatewayStatusReport {
  const readable = reply.amountMinor !== undefined && reply.currency !== undefined;
  const report = strip({
    status: reply.status,
    gatewayOrderId: clip(reply.paynetOrderId, 128),
    amount: readable ? { minor: reply.amountMinor, currency: reply.currency } : undefined,
    unreadableAmount: readable ? undefined : unreadableAmountOf(reply),
    transactionType: clip(reply.transactionType, 32),
    requestSerial: clip(reply.byRequestSn, 64),
    html: clip(reply.html, 65536),
    redirectUrl: validUrl(reply.redirectTo),
    threeDSMethod: threeDSMethodOf(reply),
    approvalCode: clip(reply.approvalCode, 64),
    errorCode: clip(reply.errorCode, 64),
    errorMessage: clip(reply.errorMessage, 1024),
    card: cardOf(reply),
  });
  const parsed = GatewayStatusReport.safeParse(report);
  // Never fail a result over a field the contract cannot carry: keep the status, the order id
  // and what the amount was (an amount the contract refuses is kept as unreadable, never lost).
  if (parsed.success) return parsed.data;
  const fallback = strip({
    status: reply.status,
    gatewayOrderId: report.gatewayOrderId,
    unreadableAmount: unreadableAmountOf(reply),
  });
  return GatewayStatusReport.safeParse(fallback).success
    ? fallback
    : strip({ status: reply.status, gatewayOrderId: report.gatewayOrderId });
}

/** The synchronous reply of a mutating call says more than "processing" only sometimes. */
function asyncReport(reply: AsyncResponse): GatewayStatusReport | undefined {
  const status: GatewayStatus | undefined = reply.status;
  if (status === undefined || status === 'processing') return undefined;
  const report = strip({
    status,
    gatewayOrderId: clip(reply.paynetOrderId, 128),
    errorCode: clip(reply.errorCode, 64),
    errorMessage: clip(reply.errorMessage, 1024),
  });
  const parsed = GatewayStatusReport.safeParse(report);
  return parsed.success ? parsed.data : undefined;
}

/** The replies of the operations in the adapter's operation table. */
export type ClassifiableReply =
  | AsyncResponse
  | AsyncFormResponse
  | StatusResponse
  | CardRefResponse
  | CardInfoResponse
  | CreateRecurringPaymentResponse;

const RECURRING_PAYMENT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** A recurring payment id the contract can carry, or nothing. */
function recurringPaymentIdOf(value: string | undefined): string | undefined {
  return value !== undefined && RECURRING_PAYMENT_ID.test(value) ? value : undefined;
}

const CARD_REF_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * create-card-ref and get-card-info: the reference id and what is kept of the card (BIN, last
 * four, brand). The holder name and expiry the card-info reply carries are dropped here.
 */
function cardReferenceOf(reply: CardRefResponse | CardInfoResponse): GatewayClassification {
  if (reply.type === 'create-card-ref-response') {
    return strip({
      kind: 'accepted' as const,
      gatewayOrderId: clip(reply.paynetOrderId, 128),
      serialNumber: clip(reply.serialNumber, 64),
      cardReference: CARD_REF_ID.test(reply.cardRefId) ? { refId: reply.cardRefId } : {},
    });
  }
  const card = cardOf(reply);
  return { kind: 'accepted', cardReference: card === undefined ? {} : { card } };
}

/**
 * How a gateway refusal of a status query says the order does not exist (no public error-code
 * table names it; the sandbox and the replies seen say "unknown orderid / client_orderid …",
 * "order not found"). Only a refusal of the query's content counts: an authentication failure or
 * an unknown endpoint (HTTP 401/403/404) says nothing about the order.
 */
const NO_SUCH_ORDER =
  /\b(unknown|no such|invalid) (client_orderid|client-order-id|orderid|order)\b|\border\b.*\b(not found|does not exist)\b/i;

function saysNoSuchOrder(reason: string, message: string | undefined): boolean {
  return (
    (reason === 'validation' || reason === 'business-rule') &&
    message !== undefined &&
    NO_SUCH_ORDER.test(message)
  );
}

/** What of the request a classification depends on: a status query and the serial it asked. */
export interface AskedRequest {
  readonly operation: string;
  readonly subjectSerial?: string;
}

/** What the orchestrator learns from one gateway call (STYLE.md practice 4). */
export function classifyCall(
  result: CallResult<ClassifiableReply>,
  asked: AskedRequest,
): GatewayClassification {
  switch (result.outcome) {
    case 'accepted': {
      const reply = result.reply;
      if (reply.type === 'create-card-ref-response' || reply.type === 'get-card-info-response')
        return cardReferenceOf(reply);
      if (reply.type === 'create-recurring-payment-response') {
        // Synchronous (facts §3): the registration exists once the reply names its id.
        return strip({
          kind: 'accepted' as const,
          gatewayOrderId: clip(reply.paynetOrderId, 128),
          serialNumber: clip(reply.serialNumber, 64),
          recurringPaymentId: recurringPaymentIdOf(reply.recurringPaymentId),
        });
      }
      const gatewayOrderId = clip(reply.paynetOrderId, 128);
      if (reply.type === 'status-response') {
        const report = statusReport(reply);
        return strip({
          kind: 'accepted' as const,
          gatewayOrderId,
          // A reply to a by-request-sn query is about that request even when it does not say so.
          report:
            report.requestSerial === undefined && asked.subjectSerial !== undefined
              ? { ...report, requestSerial: asked.subjectSerial }
              : report,
          recurringPaymentId: recurringPaymentIdOf(reply.recurringPaymentId),
        });
      }
      const serialNumber = clip(reply.serialNumber, 64);
      if (reply.type === 'async-form-response') {
        // A hosted form: where the payer goes to enter the card (sale-form, preauth-form, …).
        const redirectUrl = validUrl(reply.redirectUrl);
        return strip({ kind: 'accepted' as const, gatewayOrderId, serialNumber, redirectUrl });
      }
      return strip({
        kind: 'accepted' as const,
        gatewayOrderId,
        serialNumber,
        report: asyncReport(reply),
      });
    }
    case 'rejected': {
      const message = clip(result.errorMessage, 1024);
      return strip({
        kind: 'rejected' as const,
        code: clip(result.errorCode, 64) ?? result.reason,
        message: message ?? `rejected: ${result.reason}`,
        orderUnknown:
          asked.operation === 'status' && saysNoSuchOrder(result.reason, message)
            ? (true as const)
            : undefined,
      });
    }
    case 'not-sent':
      return { kind: 'not-sent', reason: result.reason };
    case 'unknown':
      return {
        kind: 'unknown',
        reason: result.httpStatus ? `${result.reason} (HTTP ${result.httpStatus})` : result.reason,
      };
  }
}
