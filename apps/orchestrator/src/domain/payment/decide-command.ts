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
import { accepted, rejected } from './drafts';
import { statusRequest } from './decide-gateway';
import type { PaymentState } from './state';

const refuse = (code: Rejection['code'], message: string): Rejection => ({ code, message });

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
      return voidAuthorization(command, state, ctx);
    case 'return':
      return returnFunds(command, state, ctx);
    case 'refresh-status':
      return refreshStatus(command, state, ctx);
    default: {
      const never: never = command;
      throw new Error(`unhandled command ${JSON.stringify(never)}`);
    }
  }
}

function initiate(
  command: SaleCommand | PreauthCommand,
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
  if (command.amount.minor === 0) {
    return rejected(
      state,
      command,
      ctx,
      refuse('INVALID_AMOUNT', `a ${command.type} needs an amount above zero`),
    );
  }
  const requestId = ctx.ids.next();
  // client_orderid = payment id: unique per endpoint, stable across resends, and lets
  // callback-ingest address a notification to its payment without a lookup.
  const clientOrderId = command.paymentId;
  return accepted(
    state,
    command.paymentId,
    ctx,
    [
      {
        type: 'operation-requested',
        commandId: command.commandId,
        operation: command.type,
        requestId,
        amount: command.amount,
        clientOrderId,
        merchant: command.merchant,
      },
    ],
    [
      {
        type: 'send-gateway-request',
        request: {
          operation: command.type,
          requestId,
          paymentId: command.paymentId,
          merchant: command.merchant,
          clientOrderId,
          attempt: 1,
          requestedAt: ctx.now,
          amount: command.amount,
          orderDescription: command.order.description,
          ...(command.order.merchantData === undefined
            ? {}
            : { merchantData: command.order.merchantData }),
          customer: command.customer,
          billingAddress: command.billingAddress,
          redirectUrl: command.redirectUrl,
          ...(command.browser === undefined ? {} : { browser: command.browser }),
          sealedCard: command.sealedCard,
        },
      },
    ],
  );
}

/** Checks every follow-up command shares: the payment exists, same endpoint, nothing in flight. */
function followUpPrecondition(command: PaymentCommand, state: PaymentState): Rejection | undefined {
  if (state.status === 'initial')
    return refuse('PAYMENT_NOT_FOUND', `no payment ${command.paymentId}`);
  if (state.merchant?.endpointId !== command.merchant.endpointId) {
    return refuse('MERCHANT_MISMATCH', 'the payment belongs to another endpoint');
  }
  if (state.inFlight) {
    return state.inFlight.operation === 'sale' || state.inFlight.operation === 'preauth'
      ? refuse(
          'INVALID_STATE',
          `the ${state.inFlight.operation} has no outcome yet (${state.status})`,
        )
      : refuse('OPERATION_IN_PROGRESS', `a ${state.inFlight.operation} is in progress`);
  }
  return undefined;
}

function checkCurrency(state: PaymentState, amount: Money | undefined): Rejection | undefined {
  return amount !== undefined && amount.currency !== state.currency
    ? refuse(
        'CURRENCY_MISMATCH',
        `the payment is in ${state.currency ?? '?'}, not ${amount.currency}`,
      )
    : undefined;
}

function money(state: PaymentState, minor: number): Money {
  return { minor, currency: state.currency ?? 'XXX' };
}

function followUp(
  command: CaptureCommand | VoidCommand | ReturnCommand,
  state: PaymentState,
  ctx: DecisionContext,
  amount: Money,
  includeAmount: boolean,
): Decision {
  const requestId = ctx.ids.next();
  const clientOrderId = state.clientOrderId ?? command.paymentId;
  const request: GatewayFollowUpRequest = {
    operation: command.type,
    requestId,
    paymentId: command.paymentId,
    merchant: state.merchant ?? command.merchant,
    clientOrderId,
    attempt: 1,
    requestedAt: ctx.now,
    gatewayOrderId: state.gatewayOrderId ?? '',
    ...(includeAmount ? { amount } : {}),
    ...('comment' in command && command.comment !== undefined ? { comment: command.comment } : {}),
  };
  return accepted(
    state,
    command.paymentId,
    ctx,
    [
      {
        type: 'operation-requested',
        commandId: command.commandId,
        operation: command.type,
        requestId,
        amount,
        clientOrderId,
      },
    ],
    [{ type: 'send-gateway-request', request }],
  );
}

function missingOrderId(state: PaymentState): Rejection | undefined {
  return state.gatewayOrderId === undefined
    ? refuse(
        'INVALID_STATE',
        'the gateway order id of the payment is not known yet; refresh its status first',
      )
    : undefined;
}

function capture(command: CaptureCommand, state: PaymentState, ctx: DecisionContext): Decision {
  const pre = followUpPrecondition(command, state);
  if (pre) return rejected(state, command, ctx, pre);
  if (state.kind !== 'preauth')
    return rejected(state, command, ctx, refuse('NOT_A_PREAUTH', 'only a preauth can be captured'));
  if (state.status !== 'authorized' && state.status !== 'captured') {
    return rejected(
      state,
      command,
      ctx,
      refuse('INVALID_STATE', `cannot capture a payment that is ${state.status}`),
    );
  }
  const currency = checkCurrency(state, command.amount);
  if (currency) return rejected(state, command, ctx, currency);
  const remaining = state.authorized - state.captured;
  const amount = command.amount?.minor ?? remaining;
  if (amount <= 0)
    return rejected(state, command, ctx, refuse('INVALID_AMOUNT', 'nothing to capture'));
  if (amount > remaining) {
    return rejected(
      state,
      command,
      ctx,
      refuse('AMOUNT_EXCEEDS_AUTHORIZED', `at most ${remaining} can still be captured`),
    );
  }
  const noOrder = missingOrderId(state);
  if (noOrder) return rejected(state, command, ctx, noOrder);
  return followUp(command, state, ctx, money(state, amount), true);
}

function voidAuthorization(
  command: VoidCommand,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  const pre = followUpPrecondition(command, state);
  if (pre) return rejected(state, command, ctx, pre);
  if (state.kind !== 'preauth')
    return rejected(
      state,
      command,
      ctx,
      refuse('NOT_A_PREAUTH', 'only an authorization can be voided'),
    );
  const currency = checkCurrency(state, command.amount);
  if (currency) return rejected(state, command, ctx, currency);
  if (command.amount !== undefined && command.amount.minor !== state.authorized) {
    return rejected(
      state,
      command,
      ctx,
      refuse('PARTIAL_VOID_NOT_SUPPORTED', 'a void releases the whole authorization'),
    );
  }
  if (state.status !== 'authorized') {
    return rejected(
      state,
      command,
      ctx,
      refuse('INVALID_STATE', `cannot void a payment that is ${state.status}`),
    );
  }
  const noOrder = missingOrderId(state);
  if (noOrder) return rejected(state, command, ctx, noOrder);
  return followUp(command, state, ctx, money(state, state.authorized), false);
}

function returnFunds(command: ReturnCommand, state: PaymentState, ctx: DecisionContext): Decision {
  const pre = followUpPrecondition(command, state);
  if (pre) return rejected(state, command, ctx, pre);
  const currency = checkCurrency(state, command.amount);
  if (currency) return rejected(state, command, ctx, currency);
  const noOrder = missingOrderId(state);
  switch (state.status) {
    case 'authorized': {
      // On an uncaptured preauth the gateway's return is a cancel: it releases the whole hold.
      if (command.amount !== undefined && command.amount.minor !== state.authorized) {
        return rejected(
          state,
          command,
          ctx,
          refuse(
            'PARTIAL_HOLD_RELEASE_NOT_SUPPORTED',
            'a return on an uncaptured preauth releases the whole hold',
          ),
        );
      }
      if (noOrder) return rejected(state, command, ctx, noOrder);
      return followUp(
        command,
        state,
        ctx,
        money(state, state.authorized),
        command.amount !== undefined,
      );
    }
    case 'approved':
    case 'captured':
    case 'partially-returned': {
      const remaining = state.captured - state.returned;
      const amount = command.amount?.minor ?? remaining;
      if (amount <= 0)
        return rejected(state, command, ctx, refuse('INVALID_AMOUNT', 'nothing to return'));
      if (amount > remaining) {
        return rejected(
          state,
          command,
          ctx,
          refuse('AMOUNT_EXCEEDS_CAPTURED', `at most ${remaining} can still be returned`),
        );
      }
      if (noOrder) return rejected(state, command, ctx, noOrder);
      return followUp(command, state, ctx, money(state, amount), true);
    }
    case 'initial':
    case 'requested':
    case 'processing':
    case 'action-required':
    case 'outcome-unknown':
    case 'returned':
    case 'voided':
    case 'declined':
    case 'failed':
      return rejected(
        state,
        command,
        ctx,
        refuse(
          'INVALID_STATE',
          `a return needs a final successful payment, this one is ${state.status}`,
        ),
      );
    default: {
      const never: never = state.status;
      throw new Error(`unhandled status ${String(never)}`);
    }
  }
}

function refreshStatus(
  command: RefreshStatusCommand,
  state: PaymentState,
  ctx: DecisionContext,
): Decision {
  if (state.status === 'initial')
    return rejected(
      state,
      command,
      ctx,
      refuse('PAYMENT_NOT_FOUND', `no payment ${command.paymentId}`),
    );
  if (state.merchant?.endpointId !== command.merchant.endpointId) {
    return rejected(
      state,
      command,
      ctx,
      refuse('MERCHANT_MISMATCH', 'the payment belongs to another endpoint'),
    );
  }
  if (!state.inFlight) {
    return rejected(
      state,
      command,
      ctx,
      refuse('NOTHING_TO_REFRESH', `the payment is ${state.status} with nothing in flight`),
    );
  }
  return accepted(
    state,
    command.paymentId,
    ctx,
    [],
    [{ type: 'send-gateway-request', request: statusRequest(state, state.inFlight, ctx) }],
  );
}
