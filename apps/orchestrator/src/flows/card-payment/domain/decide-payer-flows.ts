import type {
  AccountVerificationCommand,
  AccountVerificationFormCommand,
  GatewayRequest,
  GatewayResult,
  GatewayStatusReport,
  Money,
  PaymentFormCommand,
  PreauthFormCommand,
  SaleFormCommand,
  UploadCresResultCommand,
  UploadMethodUrlResultCommand,
  UploadParesResultCommand,
} from '@payments/contracts';
import type { Decision, DecisionContext } from './decision';
import { accepted, addMs, firstSend, ignored, rejected, type EventDraft } from './drafts';
import { orderAndPayer, requestBase, requestPayment } from './initiate';
import type { Effect } from './effects';
import type { Timer } from './inputs';
import { existingPayment, initiationRefusal, isRejection, refuse } from './guards';
import type { InFlightOperation, OpenPayment, PaymentKind, PaymentState } from './state';

/**
 * The payer-facing branches of the card-payment flow: hosted forms, account
 * verification (direct and hosted) and the 3-D Secure uploads from the merchant's front end.
 * The outcome of each comes the way every sale's does (decide-gateway.ts): the gateway's reply,
 * a verified server callback naming the operation, or a status reply. A payer's browser return
 * stays a hint.
 */

type HostedFormCommand = SaleFormCommand | PreauthFormCommand | PaymentFormCommand;
type VerificationCommand = AccountVerificationCommand | AccountVerificationFormCommand;
type UploadCommand =
  UploadMethodUrlResultCommand | UploadCresResultCommand | UploadParesResultCommand;

/** The operation a hosted form performs (the gateway's transaction type names it). */
const HOSTED_FORM_OPERATION: Readonly<Record<HostedFormCommand['type'], PaymentKind>> = {
  'sale-form': 'sale',
  // The universal form: the merchant's endpoint decides whether it charges or only holds, so a
  // sale is only the assumption; the gateway's answer names the transaction (see below).
  'payment-form': 'sale',
  'preauth-form': 'preauth',
};

/**
 * An account verification moves no money: its amount is zero in ISO 4217's "no currency" code
 * (XXX), so every event still carries a valid Money and nobody reads it as a charge.
 */
export const VERIFICATION_AMOUNT: Money = { minor: 0, currency: 'XXX' };

const UPLOAD_OPERATIONS: ReadonlySet<GatewayResult['operation']> = new Set([
  'upload-method-url-result',
  'upload-cres-result',
  'upload-pares-result',
]);

export function isUploadOperation(operation: GatewayResult['operation']): boolean {
  return UPLOAD_OPERATIONS.has(operation);
}

/** sale-form, preauth-form, payment-form: no card here; the form URL comes back for the payer. */
export function initiateHostedForm(
  command: HostedFormCommand,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  const refusal = initiationRefusal(command, state, ctx);
  if (refusal) return rejected(state, command, ctx, refusal);
  return requestPayment(
    command,
    state,
    ctx,
    HOSTED_FORM_OPERATION[command.type],
    command.amount,
    (ids) => ({
      operation: command.type,
      ...requestBase(command, ids, ctx),
      ...orderAndPayer(command),
    }),
    command.type === 'payment-form'
      ? { via: 'hosted-form', transactionByGateway: true }
      : { via: 'hosted-form' },
  );
}

/** account-verification (sealed card) and account-verification-form (hosted page). */
export function initiateVerification(
  command: VerificationCommand,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  if (state.status !== 'initial') {
    return rejected(
      state,
      command,
      ctx,
      refuse('PAYMENT_ALREADY_EXISTS', `payment ${command.paymentId} already exists`),
    );
  }
  const common = (ids: { requestId: string; clientOrderId: string }) => ({
    ...requestBase(command, ids, ctx),
    orderDescription: command.order.description,
    customer: command.customer,
    billingAddress: command.billingAddress,
  });
  return requestPayment(
    command,
    state,
    ctx,
    'account-verification',
    VERIFICATION_AMOUNT,
    (ids): GatewayRequest =>
      command.type === 'account-verification'
        ? {
            operation: 'account-verification',
            ...common(ids),
            ...(command.redirectUrl === undefined ? {} : { redirectUrl: command.redirectUrl }),
            sealedCard: command.sealedCard,
          }
        : {
            operation: 'account-verification-form',
            ...common(ids),
            redirectUrl: command.redirectUrl,
          },
    command.type === 'account-verification' ? {} : { via: 'hosted-form' },
  );
}

/** The sale/preauth awaiting the payer's 3-D Secure step, with the gateway's order id. */
function awaitingPayer(
  command: UploadCommand,
  state: PaymentState,
): { payment: OpenPayment; op: InFlightOperation; gatewayOrderId: string } | string {
  const payment = existingPayment(command, state);
  if (isRejection(payment)) return payment.message;
  const op = payment.inFlight;
  if (op === undefined || (op.operation !== 'sale' && op.operation !== 'preauth'))
    return `the payment is ${payment.status}: no sale or preauth awaits the payer`;
  if (op.stage !== 'processing' && op.stage !== 'action-required')
    return `the ${op.operation} is ${op.stage}: the gateway has not taken it yet`;
  if (payment.gatewayOrderId === undefined)
    return 'the gateway order id of the payment is not known yet';
  return { payment, op, gatewayOrderId: payment.gatewayOrderId };
}

/**
 * upload-method-url-result, upload-cres-result, upload-pares-result: passed to the gateway about
 * the payment's order. They decide nothing by themselves: the gateway's answer to the sale or
 * preauth still comes by status or callback, so a status query follows the upload's reply.
 */
export function uploadPayerResult(
  command: UploadCommand,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  const target = awaitingPayer(command, state);
  if (typeof target === 'string') {
    const existing = existingPayment(command, state);
    return rejected(
      state,
      command,
      ctx,
      isRejection(existing) ? existing : refuse('NO_PAYER_ACTION_PENDING', target),
    );
  }
  const { payment, gatewayOrderId } = target;
  const base = uploadBase(payment, gatewayOrderId, ctx);
  const request: GatewayRequest =
    command.type === 'upload-method-url-result'
      ? {
          operation: command.type,
          ...base,
          threeDSCompInd: command.threeDSCompInd,
          ...(command.threeDSServerTransID === undefined
            ? {}
            : { threeDSServerTransID: command.threeDSServerTransID }),
          ...(command.browser === undefined ? {} : { browser: command.browser }),
        }
      : command.type === 'upload-cres-result'
        ? { operation: command.type, ...base, cRes: command.cRes }
        : { operation: command.type, ...base, paRes: command.paRes };
  return accepted(state, payment.paymentId, ctx, [], [{ type: 'send-gateway-request', request }]);
}

function uploadBase(payment: OpenPayment, gatewayOrderId: string, ctx: DecisionContext) {
  return { ...firstSend(payment, ctx.ids.next(), ctx), gatewayOrderId };
}

/** EMV 3-D Secure: a method step not completed within 10 seconds is reported as `N`. */
export const METHOD_STEP_MS = 10_000;

/** Set when the method step is announced to the front end. */
export function methodDeadlineTimer(op: InFlightOperation, ctx: DecisionContext): Effect {
  return {
    type: 'schedule-timer',
    timer: { kind: 'threeds-method-deadline', requestId: op.requestId },
    at: addMs(ctx.now, METHOD_STEP_MS),
  };
}

/**
 * The 10-second rule on the service's side: if the method step is still the payer's last action
 * when its 10 seconds are over (no challenge, no outcome announced since), the service uploads
 * `threeDSCompInd: N` itself, so a front end that never reports does not hold the payment up. A
 * front end that reported in time has moved the gateway on already; a late N is then refused or
 * changes nothing there.
 */
export function decideMethodDeadline(
  timer: Extract<Timer, { kind: 'threeds-method-deadline' }>,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  const op = state.inFlight;
  if (
    state.status === 'initial' ||
    op === undefined ||
    op.requestId !== timer.requestId ||
    op.action?.kind !== 'threeds-method' ||
    state.gatewayOrderId === undefined
  )
    return ignored('TIMER_OBSOLETE');
  return ignored('NO_NEWS', [
    {
      type: 'send-gateway-request',
      request: {
        operation: 'upload-method-url-result',
        ...uploadBase(state, state.gatewayOrderId, ctx),
        threeDSCompInd: 'N',
        threeDSServerTransID: op.action.threeDSServerTransID,
      },
    },
  ]);
}

/**
 * The reply to an upload. It is not the sale's outcome: an accepted upload brings the status
 * query forward (the gateway may have decided at once), a refused one changes nothing (the
 * gateway goes on without it: the method step with `N` after 10 s, a challenge until it times
 * out), and the poll timer keeps asking either way.
 */
export function decideUploadResult(
  result: GatewayResult,
  _payment: OpenPayment,
  op: InFlightOperation,
  ctx: DecisionContext,
): Decision {
  if (result.result.kind !== 'accepted') return ignored('UPLOAD_REFUSED');
  return ignored('NO_NEWS', [
    {
      type: 'schedule-timer',
      timer: { kind: 'status-poll', requestId: op.requestId, attempt: 1 },
      at: ctx.now,
    },
  ]);
}

/** An approved account verification: the card is good, nothing charged. */
export function accountVerified(report: GatewayStatusReport, op: InFlightOperation): EventDraft {
  return {
    type: 'account-verified',
    commandId: op.commandId,
    requestId: op.requestId,
    ...(report.gatewayOrderId === undefined ? {} : { gatewayOrderId: report.gatewayOrderId }),
    ...(report.approvalCode === undefined ? {} : { approvalCode: report.approvalCode }),
    ...(report.card === undefined ? {} : { card: report.card }),
  };
}
