import type { Money, PaymentCommand } from '@payments/contracts';
import type { DecisionContext } from './decision';
import { DEFAULT_LIMITS, type AmountLimits, type PaymentLimits, type Rejection } from './decision';
import type { FailedPayment, OpenPayment, PaymentState, SucceededPayment } from './state';

/** A refusal, or nothing (`false`/`undefined`) when the rule holds. */
export type Check = Rejection | false | undefined;

export const refuse = (code: Rejection['code'], message: string): Rejection => ({ code, message });

/** The first refusal of a chain of checks, in the order given. Checks are pure and cheap. */
export function firstRefusal(checks: readonly Check[]): Rejection | undefined {
  for (const check of checks) if (check) return check;
  return undefined;
}

/** The payment a command about an existing payment is addressed to, or why it cannot be. */
export function existingPayment(
  command: Pick<PaymentCommand, 'paymentId' | 'merchant'>,
  state: PaymentState,
): OpenPayment | Rejection {
  if (state.status === 'initial')
    return refuse('PAYMENT_NOT_FOUND', `no payment ${command.paymentId}`);
  if (state.merchant.endpointId !== command.merchant.endpointId) {
    return refuse('MERCHANT_MISMATCH', 'the payment belongs to another endpoint');
  }
  return state;
}

/** A follow-up needs an existing payment of the same endpoint with nothing in flight. */
export function followUpTarget(
  command: Pick<PaymentCommand, 'paymentId' | 'merchant'>,
  state: PaymentState,
): SucceededPayment | FailedPayment | Rejection {
  const payment = existingPayment(command, state);
  if (isRejection(payment)) return payment;
  if (payment.inFlight) {
    return payment.status === 'requested' ||
      payment.status === 'processing' ||
      payment.status === 'action-required' ||
      payment.status === 'outcome-unknown'
      ? refuse(
          'INVALID_STATE',
          `the ${payment.inFlight.operation} has no outcome yet (${payment.status})`,
        )
      : refuse('OPERATION_IN_PROGRESS', `a ${payment.inFlight.operation} is in progress`);
  }
  return payment;
}

export function isRejection(value: object): value is Rejection {
  return 'code' in value && 'message' in value;
}

export function currencyRefusal(payment: OpenPayment, amount: Money | undefined): Check {
  return (
    amount !== undefined &&
    amount.currency !== payment.currency &&
    refuse('CURRENCY_MISMATCH', `the payment is in ${payment.currency}, not ${amount.currency}`)
  );
}

export const MISSING_ORDER_ID = refuse(
  'INVALID_STATE',
  'the gateway order id of the payment is not known yet; refresh its status first',
);

function limitsOf(limits: PaymentLimits, endpointId: string): AmountLimits {
  return { ...limits.default, ...limits.endpoints?.[endpointId] };
}

/** Why a new payment (sale, preauth or a hosted form) cannot be requested, if it cannot. */
export function initiationRefusal(
  command: { type: string; paymentId: string; amount: Money; merchant: { endpointId: string } },
  state: PaymentState,
  ctx: DecisionContext,
): Rejection | undefined {
  return firstRefusal([
    state.status !== 'initial' &&
      refuse('PAYMENT_ALREADY_EXISTS', `payment ${command.paymentId} already exists`),
    command.amount.minor === 0 &&
      refuse('INVALID_AMOUNT', `a ${command.type} needs an amount above zero`),
    limitRefusal(ctx.policy?.limits, command.merchant.endpointId, command.amount),
  ]);
}

/** The endpoint's amount and currency limits for a new sale or preauth. */
export function limitRefusal(
  limits: PaymentLimits | undefined,
  endpointId: string,
  amount: Money,
): Check {
  const l = limitsOf(limits ?? DEFAULT_LIMITS, endpointId);
  return firstRefusal([
    l.currencies !== undefined &&
      !l.currencies.includes(amount.currency) &&
      refuse(
        'CURRENCY_NOT_ALLOWED',
        `endpoint ${endpointId} accepts ${l.currencies.join(', ')}, not ${amount.currency}`,
      ),
    l.minMinor !== undefined &&
      amount.minor < l.minMinor &&
      refuse('AMOUNT_BELOW_MINIMUM', `the minimum on endpoint ${endpointId} is ${l.minMinor}`),
    l.maxMinor !== undefined &&
      amount.minor > l.maxMinor &&
      refuse('AMOUNT_ABOVE_MAXIMUM', `the maximum on endpoint ${endpointId} is ${l.maxMinor}`),
  ]);
}
