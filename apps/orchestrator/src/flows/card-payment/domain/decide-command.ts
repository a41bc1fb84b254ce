import { unhandled } from '../../../domain/decision';
import type {
  CaptureCommand,
  GatewayFollowUpRequest,
  Money,
  PaymentCommand,
  PreauthCommand,
  RefreshStatusCommand,
  ReturnCommand,
  SaleCommand,
  VoidCommand,
} from '@payments/contracts';
import type { Decision, DecisionContext, Rejection } from './decision';
import { accepted, firstSend, rejected } from './drafts';
import { orderAndPayer, requestBase, requestPayment } from './initiate';
import { orderOf, refreshQuery } from '../../../domain/gateway-operation/gateway-operation';
import {
  currencyRefusal,
  existingPayment,
  firstRefusal,
  followUpTarget,
  initiationRefusal,
  isRejection,
  MISSING_ORDER_ID,
  refuse,
} from './guards';
import type { OpenPayment, PaymentState } from './state';
import { initiateHostedForm, initiateVerification, uploadPayerResult } from './decide-payer-flows';
import { cardRefRefresh } from './card-reference';
import { followUpSend } from './decide-serial';

export function decideCommand(
  command: PaymentCommand,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  switch (command.type) {
    case 'sale':
    case 'preauth':
      return initiate(command, state, ctx);
    case 'capture':
      return capture(command, state, ctx);
    case 'void':
      return voidPayment(command, state, ctx);
    case 'return':
      return returnFunds(command, state, ctx);
    case 'refresh-status':
      return refreshStatus(command, state, ctx);
    case 'sale-form':
    case 'preauth-form':
    case 'payment-form':
      return initiateHostedForm(command, state, ctx);
    case 'account-verification':
    case 'account-verification-form':
      return initiateVerification(command, state, ctx);
    case 'upload-method-url-result':
    case 'upload-cres-result':
    case 'upload-pares-result':
      return uploadPayerResult(command, state, ctx);
    default:
      return unhandled(command, 'command');
  }
}

function initiate(
  command: SaleCommand | PreauthCommand,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  const refusal = initiationRefusal(command, state, ctx);
  if (refusal) return rejected(state, command, ctx, refusal);
  return requestPayment(command, state, ctx, command.type, command.amount, (ids) => ({
    operation: command.type,
    ...requestBase(command, ids, ctx),
    ...orderAndPayer(command),
    ...(command.browser === undefined ? {} : { browser: command.browser }),
    sealedCard: command.sealedCard,
  }));
}

function money(payment: OpenPayment, minor: number): Money {
  return { minor, currency: payment.currency };
}

/**
 * A capture's, void's or return's request, unless refused (or the order's gateway id, which a
 * follow-up names, is not known).
 */
function followUp(
  command: CaptureCommand | VoidCommand | ReturnCommand,
  state: PaymentState,
  payment: OpenPayment,
  ctx: DecisionContext,
  refusal: Rejection | undefined,
  minor: number,
  includeAmount: boolean,
): Decision {
  const gatewayOrderId = payment.gatewayOrderId;
  if (refusal !== undefined || gatewayOrderId === undefined)
    return rejected(state, command, ctx, refusal ?? MISSING_ORDER_ID);
  const amount = money(payment, minor);
  const requestId = ctx.ids.next();
  const request: GatewayFollowUpRequest = {
    operation: command.type,
    ...firstSend(payment, requestId, ctx),
    gatewayOrderId,
    ...(includeAmount ? { amount } : {}),
    ...('comment' in command && command.comment !== undefined ? { comment: command.comment } : {}),
  };
  return accepted(
    payment,
    command.paymentId,
    ctx,
    [
      {
        type: 'operation-requested',
        commandId: command.commandId,
        operation: command.type,
        requestId,
        amount,
        clientOrderId: payment.clientOrderId,
      },
    ],
    followUpSend(payment, request, ctx),
  );
}

function capture(command: CaptureCommand, state: PaymentState, ctx: DecisionContext): Decision {
  const payment = followUpTarget(command, state);
  if (isRejection(payment)) return rejected(state, command, ctx, payment);
  // The gateway captures an authorization once and releases the rest of the hold.
  const remaining = payment.authorized - payment.captured;
  const amount = command.amount?.minor ?? remaining;
  const refusal = firstRefusal([
    payment.kind !== 'preauth' && refuse('NOT_A_PREAUTH', 'only a preauth can be captured'),
    payment.status === 'captured' &&
      refuse(
        'INVALID_STATE',
        'the authorization was captured once already; the gateway released the rest of the hold',
      ),
    payment.status !== 'authorized' &&
      payment.status !== 'captured' &&
      refuse('INVALID_STATE', `cannot capture a payment that is ${payment.status}`),
    currencyRefusal(payment, command.amount),
    amount <= 0 && refuse('INVALID_AMOUNT', 'nothing to capture'),
    amount > remaining &&
      refuse('AMOUNT_EXCEEDS_AUTHORIZED', `at most ${remaining} can still be captured`),
  ]);
  return followUp(command, state, payment, ctx, refusal, amount, true);
}

/**
 * A void cancels, before settlement, a whole authorization (the hold is released) or a whole sale
 * or capture (facts: "Void can only be processed for Sale and Capture transactions in the final
 * successful status"). After settlement the gateway declines it; a return is the way then.
 */
function voidPayment(command: VoidCommand, state: PaymentState, ctx: DecisionContext): Decision {
  const payment = followUpTarget(command, state);
  if (isRejection(payment)) return rejected(state, command, ctx, payment);
  const voidable =
    payment.status === 'authorized' ||
    ((payment.status === 'approved' || payment.status === 'captured') && payment.returned === 0);
  const whole = payment.status === 'authorized' ? payment.authorized : payment.captured;
  const refusal = firstRefusal([
    currencyRefusal(payment, command.amount),
    command.amount !== undefined &&
      command.amount.minor !== whole &&
      refuse('PARTIAL_VOID_NOT_SUPPORTED', 'a void cancels the whole authorization or charge'),
    !voidable &&
      refuse(
        'INVALID_STATE',
        payment.returned > 0
          ? 'part of the payment was returned already; return the rest instead'
          : `cannot void a payment that is ${payment.status}`,
      ),
  ]);
  return followUp(command, state, payment, ctx, refusal, whole, false);
}

function returnFunds(command: ReturnCommand, state: PaymentState, ctx: DecisionContext): Decision {
  const payment = followUpTarget(command, state);
  if (isRejection(payment)) return rejected(state, command, ctx, payment);
  const currency = currencyRefusal(payment, command.amount);
  if (currency) return rejected(state, command, ctx, currency);
  switch (payment.status) {
    case 'authorized': {
      // On an uncaptured preauth the gateway's return is a cancel: it releases the whole hold.
      const refusal = firstRefusal([
        command.amount !== undefined &&
          command.amount.minor !== payment.authorized &&
          refuse(
            'PARTIAL_HOLD_RELEASE_NOT_SUPPORTED',
            'a return on an uncaptured preauth releases the whole hold',
          ),
      ]);
      return followUp(
        command,
        state,
        payment,
        ctx,
        refusal,
        payment.authorized,
        command.amount !== undefined,
      );
    }
    case 'approved':
    case 'captured':
    case 'partially-returned': {
      const remaining = payment.captured - payment.returned;
      const amount = command.amount?.minor ?? remaining;
      const refusal = firstRefusal([
        amount <= 0 && refuse('INVALID_AMOUNT', 'nothing to return'),
        amount > remaining &&
          refuse('AMOUNT_EXCEEDS_CAPTURED', `at most ${remaining} can still be returned`),
      ]);
      return followUp(command, state, payment, ctx, refusal, amount, true);
    }
    case 'returned':
    case 'voided':
    case 'declined':
    case 'failed':
    case 'verified':
      return rejected(
        state,
        command,
        ctx,
        refuse(
          'INVALID_STATE',
          `a return needs a final successful payment, this one is ${payment.status}`,
        ),
      );
    default:
      return unhandled(payment, 'status');
  }
}

function refreshStatus(
  command: RefreshStatusCommand,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  const payment = existingPayment(command, state);
  if (isRejection(payment)) return rejected(state, command, ctx, payment);
  const effects = [
    refreshQuery(orderOf(payment.paymentId, payment), payment.inFlight, ctx),
    cardRefRefresh(payment),
  ].filter((effect) => effect !== undefined);
  if (effects.length === 0) {
    return rejected(
      state,
      command,
      ctx,
      refuse('NOTHING_TO_REFRESH', `the payment is ${payment.status} with nothing in flight`),
    );
  }
  return accepted(state, command.paymentId, ctx, [], effects);
}
