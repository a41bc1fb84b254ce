import { Fields } from '../fields';
import { Endpoint } from '../merchants';
import { OperationName } from '../operations';
import { Result, Status } from '../outcomes';

/**
 * The engine's vocabulary: the requests it takes, the replies and pages it gives, and the orders,
 * operations, card references and recurring plans it keeps.
 */

/** A reply body before encoding (JSON keeps numbers; the form encoding makes them strings). */
export type Reply = Record<string, string | number>;

export type EngineResult =
  | { readonly kind: 'ok'; readonly body: Reply }
  | { readonly kind: 'refused'; readonly body: Reply };

export type PageResult =
  | { readonly kind: 'html'; readonly status: number; readonly html: string }
  | { readonly kind: 'redirect'; readonly location: string };

export interface EngineRequest {
  readonly op: OperationName;
  readonly endpoint: Endpoint;
  /** The id as written in the path (endpoint or group), echoed as `end-point-id`. */
  readonly endpointRef: string;
  readonly fields: Fields;
  /** Public origin of the sandbox, for page URLs (`http://127.0.0.1:8080`). */
  readonly baseUrl: string;
  /** Outcome forced by the test controls. */
  readonly forced?: Result;
  /**
   * Test controls: the gateway processes (and reports) this amount instead of the one asked for,
   * as a partial approval would: the order, its ledger movements and its status show it.
   */
  readonly processedAmountMinor?: number;
  /** Test controls: the operation stays processing this long instead of the endpoint's delay. */
  readonly processingDelayMs?: number;
  /** The OAuth consumer key, when the request was OAuth-signed (login need not be a field). */
  readonly oauthLogin?: string;
}

export interface CallbackDelivery {
  readonly url: string;
  readonly params: Readonly<Record<string, string>>;
  readonly login: string;
  readonly clientOrderId: string;
  /** The endpoint the order was made on (fault rules can match it). */
  readonly endpointId: string;
  readonly maxAttempts: number | undefined;
  /** The trace of the request that started the operation (opaque W3C traceparent), if any. */
  readonly traceparent?: string;
}

/**
 * What a reused client_orderid does (README "Decisions"): `refuse` (the default) returns the
 * first reply to the identical request and refuses a different one; `charge-again` (test
 * controls only) creates and charges a second order, as a gateway without that check would.
 */
export type ReuseMode = 'refuse' | 'charge-again';

export interface CallbackSink {
  enqueue(delivery: CallbackDelivery): void;
}

export interface EngineSettings {
  /** A sale or capture can be voided until it settles. */
  readonly settlementDelayMs: number;
  /** A payout-check that is not confirmed by payout-pay within this time expires. */
  readonly payoutCheckTtlMs: number;
  /** 3DS method step: without an upload the sandbox goes on with threeDSCompInd N. */
  readonly methodTimeoutMs: number;
  /**
   * A 3-D Secure step the payer leaves unfinished (no method result, no challenge answer, no
   * upload) ends after this long: declined, "3-D Secure not completed in time". Default 10 min.
   */
  readonly challengeTimeoutMs?: number;
  /** Require the customer fields the docs mark required (address, city, zip, country, IP…). */
  readonly requireCustomerFields: boolean;
}

export const DEFAULT_SETTINGS: EngineSettings = {
  settlementDelayMs: 24 * 3600_000,
  payoutCheckTtlMs: 15 * 60_000,
  methodTimeoutMs: 10_000,
  challengeTimeoutMs: 600_000,
  requireCustomerFields: true,
};

export type OpType =
  | 'sale'
  | 'preauth'
  | 'capture'
  | 'void'
  | 'return'
  | 'account-verification'
  | 'payout'
  | 'payout-check'
  | 'transfer'
  | 'pan-eligibility';

export type OrderKind =
  | 'sale'
  | 'preauth'
  | 'account-verification'
  | 'rebill'
  | 'payout'
  | 'payout-two-step'
  | 'transfer'
  | 'pan-eligibility';

export interface CardSummary {
  readonly bin: string;
  readonly lastFour: string;
  readonly brand: string;
  readonly holder: string;
  readonly expMonth: string;
  readonly expYear: string;
  /** Keyed hash of the PAN (process-random key): same card → same value, PAN not kept. */
  readonly panHash: string;
}

export interface Operation {
  readonly serial: string;
  readonly type: OpType;
  readonly amountMinor: number;
  readonly createdAt: number;
  status: Status;
  /** When processing ends; undefined while blocked on the payer (3DS, hosted page). */
  dueAt: number | undefined;
  pending: Result | undefined;
  result: Result | undefined;
  approvalCode: string | undefined;
  /** The trace of the request that created it: its callback continues that trace. */
  readonly traceparent: string | undefined;
}

export interface ThreeDS {
  stage: 'method' | 'challenge' | 'awaiting-upload' | 'done';
  readonly token: string;
  readonly serverTransId: string;
  readonly acsTransId: string;
  readonly methodDeadline: number;
  /** The payer must have finished by then (EngineSettings.challengeTimeoutMs). */
  readonly expiresAt: number;
  compInd: string | undefined;
  passed: boolean | undefined;
}

export interface Hosted {
  readonly token: string;
  /** A payout's page: the card entered is the destination. */
  readonly destination: boolean;
  submitted: boolean;
}

export interface Order {
  readonly orderId: string;
  readonly login: string;
  readonly endpoint: Endpoint;
  readonly endpointRef: string;
  readonly clientOrderId: string;
  readonly kind: OrderKind;
  readonly amountMinor: number;
  readonly currency: string;
  readonly fingerprint: string;
  readonly baseUrl: string;
  readonly createdAt: number;
  readonly email: string | undefined;
  readonly redirectUrl: string | undefined;
  readonly callbackUrl: string | undefined;
  readonly merchantData: string | undefined;
  readonly ops: Operation[];
  card: CardSummary | undefined;
  destination: string | undefined;
  firstReply: Reply;
  authorizedMinor: number;
  holdOpen: boolean;
  capturedMinor: number;
  refundedMinor: number;
  voided: boolean;
  settleAt: number | undefined;
  threeDS: ThreeDS | undefined;
  hosted: Hosted | undefined;
  payoutCheck: { readonly expiresAt: number; state: 'open' | 'paid' | 'expired' } | undefined;
  forced: Result | undefined;
}

export interface CardRef {
  readonly id: string;
  readonly login: string;
  readonly card: CardSummary;
  readonly sourceOrderId: string;
  readonly verified3d: string;
}

export interface RecurringPlan {
  readonly id: string;
  readonly login: string;
  readonly endpoint: Endpoint;
  readonly clientOrderId: string;
  readonly amountMinor: number;
  readonly currency: string;
  readonly period: 'day' | 'week' | 'month';
  readonly interval: number;
  readonly maxCharges: number | undefined;
  readonly card: CardSummary;
  readonly profile: Result;
  readonly callbackUrl: string | undefined;
  readonly baseUrl: string;
  readonly startAt: number;
  charges: number;
  nextAt: number;
}

export const TYPE_OF: Readonly<Record<OrderKind, OpType>> = {
  sale: 'sale',
  preauth: 'preauth',
  'account-verification': 'account-verification',
  rebill: 'sale',
  payout: 'payout',
  'payout-two-step': 'payout-check',
  transfer: 'transfer',
  'pan-eligibility': 'pan-eligibility',
};

/** Where the order's payer and merchant are reached; all optional. */
export interface Contacts {
  readonly email?: string | undefined;
  readonly redirectUrl?: string | undefined;
  readonly callbackUrl?: string | undefined;
}
