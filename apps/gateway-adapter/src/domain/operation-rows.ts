/**
 * The kit the adapter's operation-table families (`families/`) build their rows with: the row
 * kinds (a call that needs nothing, one that sends opened cards, one that needs the callback URL),
 * their constructors and the field helpers more than one family uses. `operation-table.ts` merges
 * the families into the table.
 */
import type {
  Card,
  GatewayOperation,
  GatewayRequest,
  GatewaySaleRequest,
} from '@payments/contracts';
import {
  OPERATIONS,
  type OperationCall,
  type OperationId,
  type ReplyKindOf,
  type RequestOf,
} from '@payments/payment-gateway';

/** Reply kinds the adapter can classify (classify.ts). */
export type ClassifiableReplyKind =
  | 'async-response'
  | 'async-form-response'
  | 'status-response'
  | 'create-card-ref-response'
  | 'get-card-info-response'
  | 'create-recurring-payment-response';

/** Catalogue operations whose replies the adapter can classify. */
export type AdapterOperationId = {
  [K in OperationId]: ReplyKindOf<K> extends ClassifiableReplyKind ? K : never;
}[OperationId];

/**
 * What a call may take from the endpoint besides the request: the `server_callback_url` and how
 * the endpoint signs create-card-ref (v2 control or v4 RSA-SHA256, per endpoint).
 */
export interface CallContext {
  readonly serverCallbackUrl?: string;
  readonly cardRefApi?: 'v2' | 'v4';
}

/** One catalogue call: the operation id and its typed fields. */
export type GatewayCall = OperationCall<AdapterOperationId>;

/** The request of one contract operation. */
export type RequestFor<O extends GatewayOperation> = GatewayRequest & { readonly operation: O };

/** A row whose call needs nothing but the request. */
export interface PlainRow<O extends GatewayOperation> {
  readonly needs: 'nothing';
  readonly catalogue: AdapterOperationId;
  /** From the catalogue (`OPERATIONS[catalogue].mutating`): ledger row before the call. */
  readonly mutating: boolean;
  readonly call: (request: RequestFor<O>, context: CallContext) => GatewayCall;
}

/**
 * A row that sends cards: opened from the request's sealed cards just before signing (one card;
 * a transfer's source and destination).
 */
export interface SealedCardRow<O extends GatewayOperation> {
  readonly needs: 'sealed-card';
  readonly catalogue: AdapterOperationId;
  readonly mutating: boolean;
  /** The sealed cards, in the order `call` takes them opened. */
  readonly sealedCards: (request: RequestFor<O>) => readonly string[];
  readonly call: (
    request: RequestFor<O>,
    cards: readonly Card[],
    serverCallbackUrl: string,
  ) => GatewayCall;
}

/** A row that needs the endpoint's callback URL but no card (hosted forms). */
export interface CallbackRow<O extends GatewayOperation> {
  readonly needs: 'callback-url';
  readonly catalogue: AdapterOperationId;
  readonly mutating: boolean;
  readonly call: (request: RequestFor<O>, serverCallbackUrl: string) => GatewayCall;
}

export type OperationRow<O extends GatewayOperation> =
  PlainRow<O> | SealedCardRow<O> | CallbackRow<O>;

/**
 * `{ id, fields }` typed per operation. TypeScript cannot see that a pair built under a generic
 * `Id` is a member of the union over all ids (correlated generics), hence the one cast here; the
 * signature is what checks each row.
 */
export function callOf<Id extends AdapterOperationId>(id: Id, fields: RequestOf<Id>): GatewayCall {
  return { id, fields } as OperationCall;
}

export function plainRow<O extends GatewayOperation, Id extends AdapterOperationId>(
  catalogue: Id,
  fields: (request: RequestFor<O>, context: CallContext) => RequestOf<Id>,
): PlainRow<O> {
  return {
    needs: 'nothing',
    catalogue,
    mutating: OPERATIONS[catalogue].mutating,
    call: (request, context) => callOf(catalogue, fields(request, context)),
  };
}

export function sealedCardRow<O extends GatewayOperation, Id extends AdapterOperationId>(
  catalogue: Id,
  sealedCard: (request: RequestFor<O>) => string,
  fields: (request: RequestFor<O>, card: Card, serverCallbackUrl: string) => RequestOf<Id>,
): SealedCardRow<O> {
  return twoCardRow(
    catalogue,
    (request) => [sealedCard(request)],
    (request, [card], cb) => fields(request, card, cb),
  );
}

/** A row whose call takes opened cards (`sealedCards` gives them in order). */
export function twoCardRow<O extends GatewayOperation, Id extends AdapterOperationId>(
  catalogue: Id,
  sealedCards: (request: RequestFor<O>) => readonly string[],
  fields: (
    request: RequestFor<O>,
    cards: readonly [Card, ...Card[]],
    serverCallbackUrl: string,
  ) => RequestOf<Id>,
): SealedCardRow<O> {
  return {
    needs: 'sealed-card',
    catalogue,
    mutating: OPERATIONS[catalogue].mutating,
    sealedCards,
    call: (request, cards, cb) => {
      const count = sealedCards(request).length;
      if (cards.length !== count || cards.length === 0)
        throw new Error(`${catalogue} takes ${count} opened card(s), got ${cards.length}`);
      return callOf(catalogue, fields(request, cards as readonly [Card, ...Card[]], cb));
    },
  };
}

/** `server_callback_url` for an endpoint: `<CALLBACK_BASE_URL>/callbacks/gateway/<endpointId>`. */
export function callbackUrl(callbackBaseUrl: string, endpointId: string): string {
  return `${callbackBaseUrl.replace(/\/+$/, '')}/callbacks/gateway/${encodeURIComponent(endpointId)}`;
}

/** The object without its undefined fields (the gateway takes no empty field). */
export function defined<T extends Record<string, unknown>>(o: T): T {
  for (const key of Object.keys(o)) if (o[key] === undefined) delete o[key];
  return o;
}

/** The payer's address and contact fields, common to sales, forms and account verification. */
export function payerFields(request: {
  readonly customer: GatewaySaleRequest['customer'];
  readonly billingAddress: GatewaySaleRequest['billingAddress'];
}) {
  const { customer, billingAddress: address } = request;
  return {
    address1: address.address1,
    city: address.city,
    zip_code: address.zipCode,
    country: address.country,
    state: address.state,
    email: customer.email,
    ipaddress: customer.ipAddress,
    first_name: customer.firstName,
    last_name: customer.lastName,
    birthday: customer.birthday,
    ssn: customer.ssnLastFour,
  };
}

/**
 * Rows whose call needs the callback URL but no card: a plain row cannot know the URL, so these
 * are built per endpoint by `hostedRow`.
 */
export function hostedRow<O extends GatewayOperation, Id extends AdapterOperationId>(
  catalogue: Id,
  fields: (request: RequestFor<O>, serverCallbackUrl: string) => RequestOf<Id>,
): CallbackRow<O> {
  return {
    needs: 'callback-url',
    catalogue,
    mutating: OPERATIONS[catalogue].mutating,
    call: (request, cb) => callOf(catalogue, fields(request, cb)),
  };
}

/** One family's rows: for each of its operations, the row that performs it. */
export type FamilyRows<K extends GatewayOperation> = { readonly [O in K]: OperationRow<O> };
