import type { GatewayOperation } from '@payments/contracts';

/**
 * Which of the gateway's answers name an operation's amount (spec `card-payment-api.md`, facts
 * §3, §3.1, §6), written once: an approval that names no amount is accepted at our amount only
 * where the spec says the answer carries none. Anywhere else a missing amount is treated as an
 * unreadable one (`amount-mismatch`), never as "the amount we asked for".
 *
 * The answers:
 *  - `send-reply`: the operation's own synchronous reply, the `async-response` envelope (`type`,
 *    `status`, `paynet-order-id`, `merchant-order-id`, `serial-number`, `error-*`): no amount, for
 *    every operation;
 *  - `status-reply`: `status-response`, whose `amount` is "the actual transaction amount" with
 *    its `currency` (the order's initial amount even when asked `by-request-sn`);
 *  - `callback`: the server callback, `amount` mandatory with `currency` (facts §6).
 */
export type GatewayAnswer = 'send-reply' | 'status-reply' | 'callback';

/**
 * What an operation's status replies and callbacks say of its amount:
 *  - `own`: the operation's own amount (it opens the order, whose amount it is);
 *  - `order`: the order's initial amount, not the operation's (a follow-up: capture, void,
 *    return, payout-pay) — nothing to compare with;
 *  - `none`: no amount (moves no money, or moves none of its own).
 */
export type ReplyAmount = 'own' | 'order' | 'none';

export const REPLY_AMOUNTS: Readonly<Record<GatewayOperation, ReplyAmount>> = {
  sale: 'own',
  preauth: 'own',
  rebill: 'own',
  'sale-form': 'own',
  'preauth-form': 'own',
  'payment-form': 'own',
  'payout-check': 'own',
  payout: 'own',
  'payout-v4': 'own',
  'payout-form': 'own',
  transfer: 'own',
  'transfer-by-ref': 'own',
  'create-recurring-payment': 'own',
  capture: 'order',
  void: 'order',
  return: 'order',
  'payout-pay': 'order',
  // A zero-amount authorization: its replies' amount, if any, is 0 and is not compared.
  'account-verification': 'none',
  'account-verification-form': 'none',
  'create-card-ref': 'none',
  'get-card-info': 'none',
  'pan-eligibility': 'none',
  'upload-method-url-result': 'none',
  'upload-cres-result': 'none',
  'upload-pares-result': 'none',
  status: 'none',
};

/** The operations (the README's "Truth about money" table) whose approvals must name an amount. */
export const OPERATIONS_NAMING_THEIR_AMOUNT: readonly GatewayOperation[] = (
  Object.keys(REPLY_AMOUNTS) as GatewayOperation[]
).filter((operation) => REPLY_AMOUNTS[operation] === 'own');

/**
 * Whether `answer` about `operation` must name its amount: a status reply or a callback about an
 * operation whose own amount they carry. An operation name the table does not know is held to
 * it (fail closed).
 */
export function answerNamesAmount(operation: string, answer: GatewayAnswer): boolean {
  if (answer === 'send-reply') return false;
  const carried: ReplyAmount | undefined = (REPLY_AMOUNTS as Record<string, ReplyAmount>)[
    operation
  ];
  return carried === undefined || carried === 'own';
}
