import type {
  GatewayRequest,
  MerchantRef,
  Money,
  PaymentEvent,
  SaleCommand,
  SaleFormCommand,
} from '@payments/contracts';
import type { Decision, DecisionContext } from './decision';
import { accepted } from './drafts';
import type { PaymentKind, PaymentState } from './state';

type OperationRequested = Extract<PaymentEvent, { type: 'operation-requested' }>;

/** What a new payment's `operation-requested` may add: the hosted-form mark, a rebill's reference and cycle. */
export type RequestedExtras = Partial<
  Pick<OperationRequested, 'via' | 'transactionByGateway' | 'cardRef' | 'schedule'>
>;

/** The command fields every new payment's first request is addressed by. */
export interface NewPayment {
  readonly paymentId: string;
  readonly commandId: string;
  readonly merchant: MerchantRef;
}

/** Ids of a new payment's first request. */
export interface FirstRequestIds {
  readonly requestId: string;
  readonly clientOrderId: string;
}

/**
 * The one way a payment starts (sale, preauth, rebill, hosted forms, account verification): its
 * `operation-requested` and its first gateway request, built by `request` from the new ids.
 * client_orderid = payment id: unique per endpoint, stable across resends, and lets
 * callback-ingest address a notification to its payment without a lookup.
 */
export function requestPayment(
  command: NewPayment,
  state: PaymentState,
  ctx: DecisionContext,
  operation: PaymentKind,
  amount: Money,
  request: (ids: FirstRequestIds) => GatewayRequest,
  extras: RequestedExtras = {},
): Decision {
  const ids: FirstRequestIds = { requestId: ctx.ids.next(), clientOrderId: command.paymentId };
  return accepted(
    state,
    command.paymentId,
    ctx,
    [
      {
        type: 'operation-requested',
        commandId: command.commandId,
        operation,
        requestId: ids.requestId,
        amount,
        clientOrderId: ids.clientOrderId,
        merchant: command.merchant,
        ...extras,
      },
    ],
    [{ type: 'send-gateway-request', request: request(ids) }],
  );
}

/** The fields every first request of a new payment carries. */
export function requestBase(command: NewPayment, ids: FirstRequestIds, ctx: DecisionContext) {
  return {
    requestId: ids.requestId,
    paymentId: command.paymentId,
    merchant: command.merchant,
    clientOrderId: ids.clientOrderId,
    attempt: 1,
    requestedAt: ctx.now,
  };
}

/** The order and payer fields of a sale-like first request (card sent or entered on a form). */
export function orderAndPayer(
  command: Pick<
    SaleCommand | SaleFormCommand,
    'amount' | 'order' | 'customer' | 'billingAddress' | 'redirectUrl'
  >,
) {
  return {
    amount: command.amount,
    orderDescription: command.order.description,
    ...(command.order.merchantData === undefined
      ? {}
      : { merchantData: command.order.merchantData }),
    customer: command.customer,
    billingAddress: command.billingAddress,
    redirectUrl: command.redirectUrl,
  };
}
