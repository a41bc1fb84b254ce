import type {
  Card,
  GatewayFollowUpRequest,
  GatewayOperation,
  GatewayRequest,
  GatewaySaleRequest,
  GatewayStatusRequest,
} from '@payments/contracts';
import { CARD_PAYMENT_ROWS } from './families/card-payments';
import { CARD_REF_RECURRING_ROWS } from './families/card-refs-recurring';
import { FOLLOW_UP_ROWS } from './families/follow-ups';
import { HOSTED_FORM_ROWS } from './families/hosted-forms';
import { PAYOUT_TRANSFER_ROWS } from './families/payouts-transfers';
import { STATUS_ROWS } from './families/status';
import { THREE_DS_ROWS } from './families/three-ds';
import type { CallContext, GatewayCall, OperationRow, RequestFor } from './operation-rows';

export { DEFAULT_VOID_COMMENT } from './families/follow-ups';
export type {
  AdapterOperationId,
  CallContext,
  ClassifiableReplyKind,
  GatewayCall,
  OperationRow,
  RequestFor,
} from './operation-rows';

/**
 * The adapter's operation table: for each contract operation (`GatewayRequest.operation`) the
 * catalogue operation it is performed with, its field builder, whether it sends the sealed card
 * and whether it mutates (then it goes through the at-most-once sent-requests ledger). The
 * service looks a request up here and has no branch per operation; adding an operation is
 * adding a row to its family (README "Adding an operation"). The rows live in `families/`, one
 * file per operation family, named as the gateway sandbox's handler families and the client
 * catalogue's (`libs/payment-gateway/src/families/`); the table does not compile with an
 * operation missing.
 */
export const OPERATION_TABLE: { readonly [O in GatewayOperation]: OperationRow<O> } = {
  ...CARD_PAYMENT_ROWS,
  ...HOSTED_FORM_ROWS,
  ...FOLLOW_UP_ROWS,
  ...STATUS_ROWS,
  ...CARD_REF_RECURRING_ROWS,
  ...PAYOUT_TRANSFER_ROWS,
  ...THREE_DS_ROWS,
};

/** `server_callback_url` for an endpoint: `<CALLBACK_BASE_URL>/callbacks/gateway/<endpointId>`. */
export function callbackUrl(callbackBaseUrl: string, endpointId: string): string {
  return `${callbackBaseUrl.replace(/\/+$/, '')}/callbacks/gateway/${encodeURIComponent(endpointId)}`;
}

/** What performing one request takes, read from its row (no branch per operation). */
export type CallPlan =
  | {
      readonly needs: 'nothing';
      readonly mutating: boolean;
      readonly call: (context: CallContext) => GatewayCall;
    }
  | {
      readonly needs: 'sealed-card';
      readonly mutating: boolean;
      readonly sealedCards: readonly string[];
      readonly call: (cards: readonly Card[], serverCallbackUrl: string) => GatewayCall;
    }
  | {
      readonly needs: 'callback-url';
      readonly mutating: boolean;
      readonly call: (serverCallbackUrl: string) => GatewayCall;
    };

function planFor<O extends GatewayOperation>(operation: O, request: RequestFor<O>): CallPlan {
  const row: OperationRow<O> = OPERATION_TABLE[operation];
  switch (row.needs) {
    case 'nothing':
      return {
        needs: 'nothing',
        mutating: row.mutating,
        call: (context) => row.call(request, context),
      };
    case 'sealed-card':
      return {
        needs: 'sealed-card',
        mutating: row.mutating,
        sealedCards: row.sealedCards(request),
        call: (cards, serverCallbackUrl) => row.call(request, cards, serverCallbackUrl),
      };
    case 'callback-url':
      return {
        needs: 'callback-url',
        mutating: row.mutating,
        call: (serverCallbackUrl) => row.call(request, serverCallbackUrl),
      };
    default: {
      const never: never = row;
      return never;
    }
  }
}

/** Looks the request's operation up in {@link OPERATION_TABLE}. */
export function planCall(request: GatewayRequest): CallPlan {
  return planFor(request.operation, request);
}

/** The sale/preauth call of a request whose card is already opened (tests, readability). */
export function cardPaymentCall(
  request: GatewaySaleRequest,
  card: Card,
  serverCallbackUrl: string,
): GatewayCall {
  const plan = planCall(request);
  if (plan.needs !== 'sealed-card') throw new Error(`${request.operation} sends no card`);
  return plan.call([card], serverCallbackUrl);
}

/** The call of a request that needs nothing besides itself (capture, void, return, status). */
function plainCall(request: GatewayFollowUpRequest | GatewayStatusRequest): GatewayCall {
  const plan = planCall(request);
  if (plan.needs !== 'nothing') throw new Error(`${request.operation} needs a card`);
  return plan.call({});
}

export const followUpCall: (request: GatewayFollowUpRequest) => GatewayCall = plainCall;
export const statusCall: (request: GatewayStatusRequest) => GatewayCall = plainCall;

/** True for operations that move money: they go through the sent-requests ledger. */
export function isMutating(request: GatewayRequest): boolean {
  return OPERATION_TABLE[request.operation].mutating;
}
