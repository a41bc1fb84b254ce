import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Clock } from './clock';
import { callbackControl } from './control';
import {
  CardInput,
  Fields,
  Refusal,
  clientOrderIdOf,
  opt,
  optAmount,
  optDestinationPan,
  optUrl,
  req,
  reqAmount,
  reqCard,
  reqClientOrderId,
  reqCurrency,
  reqCustomer,
  reqEmail,
  reqPositiveAmount,
  reqUrl,
} from './fields';
import { Ledger, Movement } from './ledger';
import { maskPan } from './luhn';
import { Endpoint, MerchantRegistry } from './merchants';
import { formatMinor } from './money';
import { OperationName } from './operations';
import {
  APPROVED,
  CardDecision,
  FinalStatus,
  Result,
  Status,
  THREEDS_FAILED,
  THREEDS_TIMED_OUT,
  decideByCvv,
  isFinal,
} from './outcomes';
import {
  acsChallengePage,
  autoPostFragment,
  autoPostPage,
  hostedCardPage,
  messagePage,
} from './pages';

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

type OpType =
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

type OrderKind =
  | 'sale'
  | 'preauth'
  | 'account-verification'
  | 'rebill'
  | 'payout'
  | 'payout-two-step'
  | 'transfer'
  | 'pan-eligibility';

interface CardSummary {
  readonly bin: string;
  readonly lastFour: string;
  readonly brand: string;
  readonly holder: string;
  readonly expMonth: string;
  readonly expYear: string;
  /** Keyed hash of the PAN (process-random key): same card → same value, PAN not kept. */
  readonly panHash: string;
}

interface Operation {
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

interface ThreeDS {
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

interface Hosted {
  readonly token: string;
  /** A payout's page: the card entered is the destination. */
  readonly destination: boolean;
  submitted: boolean;
}

interface Order {
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

interface CardRef {
  readonly id: string;
  readonly login: string;
  readonly card: CardSummary;
  readonly sourceOrderId: string;
  readonly verified3d: string;
}

interface RecurringPlan {
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

const TYPE_OF: Readonly<Record<OrderKind, OpType>> = {
  sale: 'sale',
  preauth: 'preauth',
  'account-verification': 'account-verification',
  rebill: 'sale',
  payout: 'payout',
  'payout-two-step': 'payout-check',
  transfer: 'transfer',
  'pan-eligibility': 'pan-eligibility',
};

/** Money moved when an operation is approved. Pure: returns the movements and the new figures. */
function movementsOnApproval(order: Order, op: Operation): Array<[Movement, number]> {
  switch (op.type) {
    case 'sale':
      return [['charged', op.amountMinor]];
    case 'preauth':
      return [['authorized', op.amountMinor]];
    case 'capture': {
      const rest = order.authorizedMinor - op.amountMinor;
      return rest > 0
        ? [
            ['captured', op.amountMinor],
            ['released', rest],
          ]
        : [['captured', op.amountMinor]];
    }
    case 'void':
      return order.holdOpen
        ? [['released', order.authorizedMinor]]
        : [['voided', order.capturedMinor]];
    case 'return':
      return order.holdOpen
        ? [['released', order.authorizedMinor]]
        : [['refunded', op.amountMinor]];
    case 'payout':
      return [['paid-out', op.amountMinor]];
    case 'transfer':
      return [['transferred', op.amountMinor]];
    case 'account-verification':
    case 'payout-check':
    case 'pan-eligibility':
      return [];
  }
}

/**
 * The gateway's behaviour, framework-free: orders and their operations, the state machine with
 * its preconditions, CVV outcomes, 3-D Secure, hosted pages, card references, recurring
 * schedules, two-step payouts, the ledger and callbacks. Time comes from the injected clock.
 */
export class SandboxEngine {
  private readonly orders = new Map<string, Order>();
  private readonly byClientOrderId = new Map<string, Order>();
  private readonly byToken = new Map<string, Order>();
  private readonly cardRefs = new Map<string, CardRef>();
  private readonly cardRefByOrder = new Map<string, CardRef>();
  private readonly plans = new Map<string, RecurringPlan>();
  private readonly pending = new Set<Order>();
  /** Two-step payouts whose check is neither paid nor expired (kept apart: settle runs often). */
  private readonly openChecks = new Set<Order>();
  private nextOrderId = 1_000_001;
  private nextSerial = 1;
  private nextRef = 500_001;
  private reuseMode: ReuseMode = 'refuse';
  private readonly panKey = randomBytes(32);

  constructor(
    private readonly merchants: MerchantRegistry,
    private readonly clock: Clock,
    private readonly ledger: Ledger,
    private readonly callbacks: CallbackSink,
    private readonly settings: EngineSettings = DEFAULT_SETTINGS,
    /** The caller's trace as a W3C traceparent (the application's tracing), kept per operation. */
    private readonly currentTrace: () => string | undefined = () => undefined,
  ) {}

  // ------------------------------------------------------------------ API operations

  execute(request: EngineRequest): EngineResult {
    this.settle();
    try {
      const body = this.dispatch(request);
      this.settle();
      return { kind: 'ok', body };
    } catch (error) {
      if (error instanceof Refusal) {
        return { kind: 'refused', body: this.validationError(error.message, error.code, request) };
      }
      throw error;
    }
  }

  private dispatch(r: EngineRequest): Reply {
    switch (r.op) {
      case 'SALE':
        return this.cardPayment(r, 'sale');
      case 'PREAUTH':
        return this.cardPayment(r, 'preauth');
      case 'ACCOUNT_VERIFICATION':
        return this.cardPayment(r, 'account-verification');
      case 'SALEFORM':
        return this.formPayment(r, 'sale');
      case 'PAYMENTFORM':
        return this.formPayment(r, r.endpoint.paymentForm);
      case 'PREAUTHFORM':
        return this.formPayment(r, 'preauth');
      case 'ACCOUNT_VERIFICATION_FORM':
        return this.formPayment(r, 'account-verification');
      case 'PAYOUTFORM':
        return this.formPayment(r, 'payout');
      case 'CAPTURE':
        return this.capture(r);
      case 'VOID':
        return this.void(r);
      case 'RETURN':
        return this.return(r);
      case 'STATUS':
        return this.status(r);
      case 'CARDREF':
      case 'CARDREF_V4':
        return this.createCardRef(r);
      case 'CARDINFO':
        return this.cardInfo(r);
      case 'REBILL':
        return this.rebill(r);
      case 'PAYOUT':
      case 'PAYOUT_V4':
        return this.payout(r, 'payout');
      case 'PAYOUT_V4_CHECK':
        return this.payout(r, 'payout-two-step');
      case 'PAYOUT_V4_PAY':
        return this.payoutPay(r);
      case 'TRANSFER_V4':
        return this.transfer(r);
      case 'TRANSFER_BY_REF_V4':
        return this.transferByRef(r);
      case 'PAN_ELIGIBILITY_SEND':
        return this.panEligibility(r);
      case 'CREATE_RP_V4':
        return this.createRecurring(r);
      case 'TDS_UPLOAD_METHOD_URL_RESULT':
        return this.uploadMethodResult(r);
      case 'TDS_UPLOAD_CRES_RESULT':
        return this.uploadCres(r);
      case 'TDS_UPLOAD_PARES_RESULT':
        return this.uploadPares(r);
    }
  }

  private cardPayment(r: EngineRequest, kind: 'sale' | 'preauth' | 'account-verification'): Reply {
    const f = r.fields;
    const clientOrderId = reqClientOrderId(f);
    const { currency, amount } = this.pricing(r, kind === 'account-verification');
    const email = reqEmail(f);
    if (this.settings.requireCustomerFields) reqCustomer(f);
    const card = reqCard(f, this.clock.now(), true);
    const redirectUrl = this.settings.requireCustomerFields
      ? reqUrl(f, 'redirect_url')
      : optUrl(f, 'redirect_url');
    const callbackUrl = optUrl(f, 'server_callback_url');
    const fingerprint = `${r.op}|${amount}|${currency}|${card.pan.slice(-4)}`;
    const replay = this.replay(r, clientOrderId, fingerprint);
    if (replay) return replay;

    const order = this.newOrder(r, {
      kind,
      clientOrderId,
      amountMinor: amount,
      currency,
      fingerprint,
      email,
      redirectUrl,
      callbackUrl,
    });
    order.card = this.summarize(card);
    const decision = payerPresent(r.forced, card.cvv, r.endpoint.threeDSecure);
    const op = this.submit(r, order, TYPE_OF[kind], amount, decision);
    // The JSON type quirk (facts §1): a sale reply carries paynet-order-id as a number.
    return this.firstReply(
      order,
      op,
      r.op === 'SALE' ? { 'paynet-order-id': Number(order.orderId) } : {},
    );
  }

  private formPayment(
    r: EngineRequest,
    kind: 'sale' | 'preauth' | 'account-verification' | 'payout',
  ): Reply {
    const f = r.fields;
    const clientOrderId = reqClientOrderId(f);
    const { currency, amount } = this.pricing(r, kind === 'account-verification');
    const email = kind === 'payout' ? opt(f, 'email') : reqEmail(f);
    const redirectUrl = reqUrl(f, 'redirect_url');
    const callbackUrl = optUrl(f, 'server_callback_url');
    const fingerprint = `${r.op}|${amount}|${currency}`;
    const replay = this.replay(r, clientOrderId, fingerprint);
    if (replay) return replay;

    const order = this.newOrder(r, {
      kind,
      clientOrderId,
      amountMinor: amount,
      currency,
      fingerprint,
      email,
      redirectUrl,
      callbackUrl,
    });
    const op = this.addOp(order, TYPE_OF[kind], amount);
    op.dueAt = undefined; // waits for the payer on the hosted page
    order.forced = r.forced;
    const token = this.token();
    order.hosted = { token, destination: kind === 'payout', submitted: false };
    this.byToken.set(token, order);
    return this.firstReply(
      order,
      op,
      { 'redirect-url': `${r.baseUrl}/hpp/${token}` },
      'async-form-response',
    );
  }

  private capture(r: EngineRequest): Reply {
    const order = this.referenced(r);
    const { amount, partial } = this.optPartialAmount(r.fields, order);
    if (order.kind !== 'preauth') throw new Refusal('capture needs an order authorized by preauth');
    this.requireIdle(order);
    if (!order.holdOpen) {
      throw new Refusal(
        order.capturedMinor > 0
          ? 'the authorization has already been captured'
          : 'the order is not an approved, open authorization',
      );
    }
    const minor = partial ? amount : order.authorizedMinor;
    if (minor <= 0) throw new Refusal('amount must be greater than zero');
    if (minor > order.authorizedMinor) {
      throw new Refusal('capture amount exceeds the authorized amount');
    }
    return this.followUp(r, order, 'capture', minor);
  }

  private void(r: EngineRequest): Reply {
    const order = this.referenced(r);
    // DOC-V2-VOID marks `comment` (≤ 50) required.
    if (this.settings.requireCustomerFields) req(r.fields, 'comment', 50);
    this.requireIdle(order);
    const amountText = opt(r.fields, 'amount');
    if (amountText !== undefined) {
      const minor = optAmount(r.fields, order.currency, order.endpoint.amountExponent) ?? 0;
      const full = order.holdOpen ? order.authorizedMinor : order.capturedMinor;
      if (minor !== full) throw new Refusal('void does not support a partial amount');
    }
    const now = this.clock.now();
    const voidable =
      order.holdOpen ||
      (order.capturedMinor > 0 &&
        order.refundedMinor === 0 &&
        !order.voided &&
        order.settleAt !== undefined &&
        now < order.settleAt);
    if (!voidable) {
      throw new Refusal(
        order.capturedMinor > 0 && order.settleAt !== undefined && now >= order.settleAt
          ? 'the transaction is settled and can no longer be voided; use return'
          : 'void needs an authorized transaction that is not settled',
      );
    }
    return this.followUp(
      r,
      order,
      'void',
      order.holdOpen ? order.authorizedMinor : order.capturedMinor,
    );
  }

  private return(r: EngineRequest): Reply {
    const order = this.referenced(r);
    const { amount, partial } = this.optPartialAmount(r.fields, order);
    this.requireIdle(order);
    let minor: number;
    if (order.holdOpen) {
      if (partial && amount !== order.authorizedMinor) {
        throw new Refusal('a return on a preauth cancels it in full; partial amount not allowed');
      }
      minor = order.authorizedMinor;
    } else {
      const remaining = order.capturedMinor - order.refundedMinor;
      if (order.voided || order.capturedMinor === 0 || !this.finalSuccess(order)) {
        throw new Refusal('return needs a transaction in a final successful status');
      }
      if (remaining <= 0) throw new Refusal('the transaction has already been fully returned');
      minor = partial ? amount : remaining;
      if (minor <= 0) throw new Refusal('amount must be greater than zero');
      if (minor > remaining) {
        throw new Refusal('return amount exceeds the captured amount not yet returned');
      }
    }
    return this.followUp(r, order, 'return', minor);
  }

  private status(r: EngineRequest): Reply {
    const plan = this.registrationAsked(r);
    if (plan !== undefined) return this.registrationStatus(plan, r.endpointRef);
    const order = this.referenced(r, true);
    const sn = opt(r.fields, 'by-request-sn');
    const op = sn === undefined ? this.last(order) : order.ops.find((o) => o.serial === sn);
    if (!op) throw new Refusal(`no request with serial number ${sn ?? ''} on this order`);
    return this.statusReply(order, op);
  }

  private createCardRef(r: EngineRequest): Reply {
    const order = this.referenced(r);
    const base = order.ops[0];
    if (
      !order.card ||
      !base ||
      base.status !== 'approved' ||
      (order.kind !== 'sale' && order.kind !== 'preauth' && order.kind !== 'account-verification')
    ) {
      throw new Refusal('create-card-ref needs a card payment in a final successful status');
    }
    let ref = this.cardRefByOrder.get(order.orderId);
    if (!ref) {
      ref = {
        id: String(this.nextRef++),
        login: order.login,
        card: order.card,
        sourceOrderId: order.orderId,
        verified3d: base.result?.verified3d ?? 'UNKNOWN',
      };
      this.cardRefs.set(ref.id, ref);
      this.cardRefByOrder.set(order.orderId, ref);
    }
    const reply: Reply = {
      type: 'create-card-ref-response',
      status: 'approved',
      'serial-number': this.serial(),
      'merchant-order-id': order.clientOrderId,
      'paynet-order-id': order.orderId,
      'card-ref-id': ref.id,
    };
    if (r.op === 'CARDREF_V4') reply['unq-card-ref-id'] = order.card.panHash.slice(0, 20);
    return reply;
  }

  private cardInfo(r: EngineRequest): Reply {
    const ref = this.cardRef(r, req(r.fields, 'cardrefid', 20, 'card-ref-id'));
    return {
      type: 'get-card-info-response',
      'serial-number': this.serial(),
      'card-printed-name': ref.card.holder,
      bin: ref.card.bin,
      'last-four-digits': ref.card.lastFour,
      'expire-month': ref.card.expMonth,
      'expire-year': ref.card.expYear,
      'card-type': ref.card.brand,
      'result-3d': ref.verified3d,
    };
  }

  private rebill(r: EngineRequest): Reply {
    const f = r.fields;
    const clientOrderId = reqClientOrderId(f);
    const ref = this.cardRef(r, req(f, 'cardrefid', 20));
    const { currency, amount } = this.pricing(r);
    const cvv = optCvv(f);
    const fingerprint = `${r.op}|${amount}|${currency}|${ref.id}`;
    const replay = this.replay(r, clientOrderId, fingerprint);
    if (replay) return replay;
    const order = this.newOrder(r, {
      kind: 'rebill',
      clientOrderId,
      amountMinor: amount,
      currency,
      fingerprint,
      callbackUrl: optUrl(f, 'server_callback_url'),
    });
    order.card = ref.card;
    return this.firstReply(
      order,
      this.submit(r, order, 'sale', amount, payerAbsent(r.forced, cvv)),
    );
  }

  private payout(r: EngineRequest, kind: 'payout' | 'payout-two-step'): Reply {
    const f = r.fields;
    const clientOrderId = reqClientOrderId(f);
    const { currency, amount } = this.pricing(r);
    const pan = optDestinationPan(
      f,
      'credit_card_number',
      'destination-card-no',
      'credit-card-number',
    );
    const refId = opt(f, 'destination-card-ref-id', 'card-ref-id', 'cardrefid');
    const account = opt(f, 'account_number');
    const ref = refId === undefined ? undefined : this.cardRef(r, refId);
    if (pan === undefined && ref === undefined && account === undefined) {
      throw new Refusal(
        'a destination is required: credit_card_number, destination-card-ref-id or account_number',
      );
    }
    if (account !== undefined && pan === undefined && ref === undefined) req(f, 'bank_name', 128);
    const cvv = optCvv(f);
    const destination =
      pan !== undefined
        ? maskPan(pan)
        : ref !== undefined
          ? `card-ref ${ref.id}`
          : `account ****${(account ?? '').slice(-4)}`;
    const fingerprint = `${r.op}|${amount}|${currency}|${destination}`;
    const replay = this.replay(r, clientOrderId, fingerprint);
    if (replay) return replay;
    const order = this.newOrder(r, {
      kind,
      clientOrderId,
      amountMinor: amount,
      currency,
      fingerprint,
      ...optContacts(f),
    });
    order.destination = destination;
    if (pan !== undefined) {
      order.card = this.summarize({
        pan,
        holder: opt(f, 'card_printed_name') ?? '',
        expMonth: opt(f, 'expire_month') ?? '',
        expYear: opt(f, 'expire_year') ?? '',
        cvv: undefined,
        brand: '',
      });
    } else if (ref) {
      order.card = ref.card;
    }
    const decision = payerAbsent(r.forced, cvv);
    if (kind === 'payout-two-step') {
      order.payoutCheck = {
        expiresAt: this.clock.now() + this.settings.payoutCheckTtlMs,
        state: 'open',
      };
      this.openChecks.add(order);
      order.forced = decision.kind === 'result' ? decision.result : undefined;
      const approved: CardDecision = { kind: 'result', result: APPROVED };
      return this.firstReply(order, this.submit(r, order, 'payout-check', amount, approved));
    }
    const op = this.submit(r, order, 'payout', amount, decision);
    return this.firstReply(order, op, r.op === 'PAYOUT_V4' ? { 'payout-id': order.orderId } : {});
  }

  private payoutPay(r: EngineRequest): Reply {
    const order = this.referenced(r);
    const check = order.payoutCheck;
    if (order.kind !== 'payout-two-step' || !check) {
      throw new Refusal('payout-pay needs an order registered by payout-check');
    }
    if (check.state === 'paid') {
      // A repeated confirmation returns the payout already made, never a second one.
      const paid = order.ops.find((o) => o.type === 'payout');
      if (paid) return this.envelope('async-response', order, paid);
    }
    this.requireIdle(order);
    if (check.state === 'expired' || this.clock.now() >= check.expiresAt) {
      throw new Refusal('the payout check has expired; register a new payout-check');
    }
    if (this.ops(order)[0]?.status !== 'approved') {
      throw new Refusal('the payout check was not approved');
    }
    check.state = 'paid';
    return this.followUp(r, order, 'payout', order.amountMinor, {
      kind: 'result',
      result: r.forced ?? order.forced ?? APPROVED,
    });
  }

  private transfer(r: EngineRequest): Reply {
    const f = r.fields;
    const clientOrderId = reqClientOrderId(f);
    const { currency, amount } = this.pricing(r);
    const deposit = opt(f, 'deposit2card') === 'true';
    const sourceRp = opt(f, 'card_recurring_payment_id');
    let source: CardInput | undefined;
    if (!deposit && sourceRp === undefined) source = reqCard(f, this.clock.now(), true);
    if (sourceRp !== undefined) this.plan(r, sourceRp);
    const destPan = optDestinationPan(f, 'destination-card-no', 'destination_card_no');
    const destRp = opt(f, 'destination_card_recurring_payment_id');
    if (destRp !== undefined) this.plan(r, destRp);
    if (destPan === undefined && destRp === undefined) {
      throw new Refusal('destination-card-no or destination_card_recurring_payment_id is required');
    }
    const destination = destPan !== undefined ? maskPan(destPan) : `rp ${destRp ?? ''}`;
    return this.transferOrder(r, clientOrderId, amount, currency, source, destination);
  }

  private transferByRef(r: EngineRequest): Reply {
    const f = r.fields;
    const clientOrderId = reqClientOrderId(f);
    const { currency, amount } = this.pricing(r);
    const sourceRef = opt(f, 'source-card-ref-id');
    if (sourceRef !== undefined) this.cardRef(r, sourceRef);
    const destPan = optDestinationPan(f, 'destination-card-no');
    const destRef = opt(f, 'destination-card-ref-id');
    if (destRef !== undefined) this.cardRef(r, destRef);
    if (destPan === undefined && destRef === undefined) {
      throw new Refusal('destination-card-no or destination-card-ref-id is required');
    }
    const destination = destPan !== undefined ? maskPan(destPan) : `card-ref ${destRef ?? ''}`;
    return this.transferOrder(r, clientOrderId, amount, currency, undefined, destination);
  }

  private transferOrder(
    r: EngineRequest,
    clientOrderId: string,
    amount: number,
    currency: string,
    source: CardInput | undefined,
    destination: string,
  ): Reply {
    const fingerprint = `${r.op}|${amount}|${currency}|${destination}`;
    const replay = this.replay(r, clientOrderId, fingerprint);
    if (replay) return replay;
    const order = this.newOrder(r, {
      kind: 'transfer',
      clientOrderId,
      amountMinor: amount,
      currency,
      fingerprint,
      ...optContacts(r.fields),
    });
    order.destination = destination;
    if (source) order.card = this.summarize(source);
    const op = this.submit(r, order, 'transfer', amount, payerAbsent(r.forced, source?.cvv));
    return this.firstReply(order, op, { 'transaction-id': order.orderId });
  }

  private panEligibility(r: EngineRequest): Reply {
    const f = r.fields;
    const clientOrderId = reqClientOrderId(f);
    const ref = this.cardRef(r, req(f, 'sending-card-ref-id', 20));
    const fingerprint = `${r.op}|${ref.id}`;
    const replay = this.replay(r, clientOrderId, fingerprint);
    if (replay) return replay;
    const order = this.newOrder(r, {
      kind: 'pan-eligibility',
      clientOrderId,
      amountMinor: 0,
      currency: r.endpoint.currency,
      fingerprint,
    });
    order.card = ref.card;
    const op = this.addOp(order, 'pan-eligibility', 0);
    this.finish(order, op, r.forced ?? APPROVED);
    return this.firstReply(order, op, {
      status: op.status,
      eligible: op.status === 'approved' ? 'true' : 'false',
    });
  }

  private createRecurring(r: EngineRequest): Reply {
    const f = r.fields;
    const clientOrderId = reqClientOrderId(f);
    const { currency, amount } = this.pricing(r);
    const periodText = req(f, 'period', 10).toLowerCase();
    const period = (
      {
        day: 'day',
        daily: 'day',
        week: 'week',
        weekly: 'week',
        month: 'month',
        monthly: 'month',
      } as const
    )[periodText];
    if (period === undefined) throw new Refusal('period must be day, week or month');
    const intervalText = opt(f, 'interval') ?? '1';
    if (!/^[1-9]\d{0,2}$/.test(intervalText)) throw new Refusal('interval must be 1-999');
    const interval = Number(intervalText);
    const repeatsText = opt(f, 'repeats', 'max-repeats');
    if (repeatsText !== undefined && !/^[1-9]\d{0,3}$/.test(repeatsText)) {
      throw new Refusal('repeats must be 1-9999');
    }
    const refId = opt(f, 'cardrefid', 'card-ref-id');
    let card: CardSummary;
    let profile: Result = APPROVED;
    if (refId !== undefined) {
      card = this.cardRef(r, refId).card;
    } else {
      const input = reqCard(f, this.clock.now(), false);
      card = this.summarize(input);
      if (input.cvv !== undefined) {
        const d = decideByCvv(input.cvv, { threeDSGate: false, payerPresent: false });
        if (d.kind === 'result') profile = d.result;
      }
    }
    const now = this.clock.now();
    const startText = opt(f, 'start-date', 'start_date');
    let startAt = addPeriod(now, period, interval);
    if (startText !== undefined) {
      const parsed = /^\d{4}-\d{2}-\d{2}$/.test(startText)
        ? Date.parse(`${startText}T00:00:00Z`)
        : NaN;
      if (Number.isNaN(parsed)) throw new Refusal('start-date must be YYYY-MM-DD');
      startAt = Math.max(parsed, now);
    }
    const key = `rp|${r.endpoint.merchant.login}|${clientOrderId}`;
    const existing = [...this.plans.values()].find(
      (p) => `rp|${p.login}|${p.clientOrderId}` === key,
    );
    if (existing) {
      if (existing.amountMinor !== amount || existing.currency !== currency) {
        throw new Refusal(
          `client_orderid ${clientOrderId} is already used by another subscription`,
        );
      }
      return this.recurringReply(existing, r.endpointRef);
    }
    const plan: RecurringPlan = {
      id: String(this.nextRef++),
      login: r.endpoint.merchant.login,
      endpoint: r.endpoint,
      clientOrderId,
      amountMinor: amount,
      currency,
      period,
      interval,
      maxCharges: repeatsText === undefined ? undefined : Number(repeatsText),
      card,
      profile: r.forced ?? profile,
      callbackUrl: optUrl(f, 'server_callback_url'),
      baseUrl: r.baseUrl,
      startAt,
      charges: 0,
      nextAt: startAt,
    };
    this.plans.set(plan.id, plan);
    return this.recurringReply(plan, r.endpointRef);
  }

  /**
   * A status query by client_orderid alone that names a recurring registration (no order has that
   * client_orderid): the facts leave open how a merchant learns whether a create-recurring-payment
   * whose reply was lost took effect; the sandbox answers the status query about it (approved,
   * `transaction-type` create-recurring-payment, its `recurring-payment-id`). A client_orderid
   * nothing was registered under is refused like an unknown order.
   */
  private registrationAsked(r: EngineRequest): RecurringPlan | undefined {
    if (opt(r.fields, 'orderid') !== undefined) return undefined;
    const clientOrderId = clientOrderIdOf(r.fields);
    const login = opt(r.fields, 'login') ?? r.oauthLogin;
    if (clientOrderId === undefined || login !== r.endpoint.merchant.login) return undefined;
    if (this.byClientOrderId.has(`${login}|${clientOrderId}`)) return undefined;
    return [...this.plans.values()].find(
      (p) => p.login === login && p.clientOrderId === clientOrderId,
    );
  }

  private registrationStatus(plan: RecurringPlan, endpointRef: string): Reply {
    return {
      type: 'status-response',
      status: 'approved',
      amount: formatMinor(plan.amountMinor, plan.currency, plan.endpoint.amountExponent),
      currency: plan.currency,
      'merchant-order-id': plan.clientOrderId,
      'serial-number': this.serial(),
      'transaction-type': 'create-recurring-payment',
      'recurring-payment-id': plan.id,
      'end-point-id': endpointRef,
    };
  }

  private recurringReply(plan: RecurringPlan, endpointRef: string): Reply {
    return {
      type: 'async-response',
      status: 'approved',
      'serial-number': this.serial(),
      'merchant-order-id': plan.clientOrderId,
      'recurring-payment-id': plan.id,
      'end-point-id': endpointRef,
    };
  }

  private uploadMethodResult(r: EngineRequest): Reply {
    const order = this.referenced(r);
    const tds = this.pendingThreeDS(order);
    const ind = req(r.fields, 'threeDSCompInd', 1);
    if (ind !== 'Y' && ind !== 'N' && ind !== 'U')
      throw new Refusal('threeDSCompInd must be Y, N or U');
    const trans = opt(r.fields, 'threeDSServerTransID');
    if (trans !== undefined && trans !== tds.serverTransId) {
      throw new Refusal('threeDSServerTransID does not match the transaction');
    }
    if (tds.stage !== 'method' && tds.stage !== 'challenge') {
      throw new Refusal('the 3-D Secure method step is already over');
    }
    tds.compInd = ind;
    tds.stage = 'challenge';
    return this.envelope('async-response', order, this.last(order));
  }

  private uploadCres(r: EngineRequest): Reply {
    const order = this.referenced(r);
    const tds = this.pendingThreeDS(order);
    const raw = req(r.fields, 'cRes', 4096, 'cres');
    const decoded = decodeBase64Json(raw);
    if (!decoded || decoded.messageType !== 'CRes') {
      throw new Refusal('cRes is not a Base64-encoded CRes message');
    }
    if (decoded.threeDSServerTransID !== tds.serverTransId) {
      throw new Refusal('cRes belongs to another 3-D Secure transaction');
    }
    const passed = decoded.transStatus === 'Y';
    this.completeChallenge(order, passed);
    return this.envelope('async-response', order, this.last(order));
  }

  private uploadPares(r: EngineRequest): Reply {
    const order = this.referenced(r);
    const tds = this.pendingThreeDS(order);
    const raw = req(r.fields, 'PaRes', 16384, 'pares', 'paRes');
    const text = decodeBase64Text(raw);
    const xid = text === undefined ? undefined : /<xid>([^<]*)<\/xid>/.exec(text)?.[1];
    const status = text === undefined ? undefined : /<status>([YNAU])<\/status>/.exec(text)?.[1];
    if (xid === undefined || status === undefined) throw new Refusal('PaRes is not readable');
    if (xid !== tds.serverTransId) throw new Refusal('PaRes belongs to another transaction');
    this.completeChallenge(order, status === 'Y' || status === 'A');
    return this.envelope('async-response', order, this.last(order));
  }

  // ------------------------------------------------------------------ pages

  hostedPage(token: string): PageResult {
    const page = this.openHostedPage(token);
    return 'kind' in page ? page : html(200, this.hostedForm(page.order));
  }

  hostedSubmit(token: string, fields: Fields): PageResult {
    this.settle();
    const page = this.openHostedPage(token);
    if ('kind' in page) return page;
    const { order, hosted } = page;
    let card: CardInput;
    try {
      card = reqCard(fields, this.clock.now(), !hosted.destination);
    } catch (error) {
      if (error instanceof Refusal) return html(400, this.hostedForm(order, error.message));
      throw error;
    }
    hosted.submitted = true;
    order.card = this.summarize(card);
    if (hosted.destination) order.destination = maskPan(card.pan);
    const op = this.last(order);
    // A payout's destination card has no CVV to decide by.
    const decision = hosted.destination
      ? payerAbsent(order.forced, undefined)
      : payerPresent(order.forced, card.cvv, order.endpoint.threeDSecure);
    if (decision.kind === 'challenge') {
      this.startThreeDS(order, op, true);
      return { kind: 'redirect', location: `${order.baseUrl}/acs/${order.threeDS?.token ?? ''}` };
    }
    this.finish(order, op, decision.result);
    return html(200, this.returnToMerchant(order, op));
  }

  methodPage(token: string): PageResult {
    const order = this.byToken.get(token);
    if (!order?.threeDS) return html(404, messagePage('Not found', 'Unknown 3DS method.'));
    return html(200, messagePage('3DS method', 'Browser fingerprint collected.'));
  }

  acsPage(token: string): PageResult {
    this.settle();
    const session = this.openAcsSession(token);
    return 'kind' in session ? session : html(200, this.challengeForm(session.order));
  }

  acsSubmit(token: string, fields: Fields): PageResult {
    this.settle();
    const session = this.openAcsSession(token);
    if ('kind' in session) return session;
    const { order, tds } = session;
    const cancelled = fields.get('action') === 'cancel';
    const password = fields.get('password') ?? '';
    if (!cancelled && password !== this.merchants.acsPassword && password === '') {
      return html(400, this.challengeForm(order, 'Enter the password.'));
    }
    const passed = !cancelled && password === this.merchants.acsPassword;
    if (order.endpoint.threeDSResult === 'upload') {
      tds.stage = 'awaiting-upload';
      tds.passed = passed;
      return html(200, this.handBackForUpload(order, tds, passed));
    }
    this.completeChallenge(order, passed);
    return html(200, this.returnToMerchant(order, this.last(order)));
  }

  /** The order behind a hosted page not yet submitted, or the page that says why there is none. */
  private openHostedPage(token: string): { order: Order; hosted: Hosted } | PageResult {
    const order = this.byToken.get(token);
    const hosted = order?.hosted;
    if (!order || !hosted) {
      return html(404, messagePage('Not found', 'Unknown or expired payment page.'));
    }
    if (hosted.submitted) {
      return html(409, messagePage('Already submitted', 'This payment page was already used.'));
    }
    return { order, hosted };
  }

  /** The order behind a 3-D Secure challenge still open, or the page that says why not. */
  private openAcsSession(token: string): { order: Order; tds: ThreeDS } | PageResult {
    const order = this.byToken.get(token);
    const tds = order?.threeDS;
    if (!order || !tds) return html(404, messagePage('Not found', 'Unknown 3-D Secure session.'));
    if (tds.stage !== 'challenge' && tds.stage !== 'method') {
      return html(409, messagePage('Finished', 'This 3-D Secure session is already finished.'));
    }
    return { order, tds };
  }

  // ------------------------------------------------------------------ time

  /** Finishes what is due at the clock's time: processing, timeouts, expiries, schedules. */
  settle(): void {
    const now = this.clock.now();
    for (const order of [...this.pending]) {
      const tds = order.threeDS;
      if (tds?.stage === 'method' && now >= tds.methodDeadline) {
        tds.compInd = 'N';
        tds.stage = 'challenge';
      }
      if (tds !== undefined && tds.stage !== 'done' && now >= tds.expiresAt) {
        // The payer abandoned the 3-D Secure step: only a status query or the callback tells.
        tds.stage = 'done';
        this.finish(order, this.last(order), THREEDS_TIMED_OUT);
      }
      let open = false;
      for (const op of order.ops) {
        if (op.status !== 'processing') continue;
        if (op.dueAt !== undefined && op.dueAt <= now && op.pending) {
          this.finish(order, op, op.pending);
        } else {
          open = true;
        }
      }
      if (!open) this.pending.delete(order);
    }
    for (const order of [...this.openChecks]) {
      const check = order.payoutCheck;
      if (check?.state !== 'open') {
        this.openChecks.delete(order);
      } else if (now >= check.expiresAt) {
        check.state = 'expired';
        this.openChecks.delete(order);
      }
    }
    for (const plan of this.plans.values()) this.chargeDue(plan, now);
  }

  private chargeDue(plan: RecurringPlan, now: number): void {
    let guard = 0;
    while (
      plan.nextAt <= now &&
      (plan.maxCharges === undefined || plan.charges < plan.maxCharges) &&
      guard < 1000
    ) {
      guard += 1;
      plan.charges += 1;
      const clientOrderId = `${plan.clientOrderId}-${plan.charges}`;
      const order = this.storeOrder({
        orderId: String(this.nextOrderId++),
        login: plan.login,
        endpoint: plan.endpoint,
        endpointRef: String(plan.endpoint.id),
        clientOrderId,
        kind: 'rebill',
        amountMinor: plan.amountMinor,
        currency: plan.currency,
        fingerprint: `recurring|${plan.id}|${plan.charges}`,
        baseUrl: plan.baseUrl,
        callbackUrl: plan.callbackUrl,
      });
      order.card = plan.card;
      const op = this.addOp(order, 'sale', plan.amountMinor);
      this.finish(order, op, plan.profile);
      plan.nextAt = addPeriod(plan.nextAt, plan.period, plan.interval);
    }
  }

  // ------------------------------------------------------------------ test controls

  /** Reconciliation: moves an operation left in `unknown` (or processing) to a final status. */
  resolve(orderId: string, result: Result): boolean {
    const order = this.orders.get(orderId);
    const op = order ? this.last(order) : undefined;
    if (!order || !op || isFinal(op.status)) return false;
    op.dueAt = this.clock.now();
    this.finish(order, op, result);
    return true;
  }

  /**
   * Plants a reconciliation mismatch: rewrites what status replies say about the order's last
   * operation, final or not, silently — no ledger movement, no callback — as a change made on the
   * gateway's side that nothing told the merchant about.
   */
  override(orderId: string, result: Result): boolean {
    const order = this.orders.get(orderId);
    const op = order ? this.last(order) : undefined;
    if (!order || !op) return false;
    op.status = result.status;
    op.result = result;
    op.pending = undefined;
    op.dueAt = op.dueAt ?? this.clock.now();
    return true;
  }

  /**
   * Plants a second charge (reconciliation's paid-twice): a new order of the same merchant and
   * endpoint under the same client order id, a copy of the order's first operation, approved at
   * once — the ledger moves (the customer is charged again) and no callback is sent (nothing tells
   * the merchant), as when a resent request is charged again by a gateway that does not refuse a
   * reused client_orderid. A status query by the client order id alone now answers about this
   * order (the latest). Returns the new order's id, or undefined when there is no such order or
   * its first operation moves no money.
   */
  chargeAgain(orderId: string): string | undefined {
    const original = this.orders.get(orderId);
    const first = original?.ops[0];
    if (!original || !first || (first.type !== 'sale' && first.type !== 'payout')) {
      return undefined;
    }
    const order = this.storeOrder({
      orderId: String(this.nextOrderId++),
      login: original.login,
      endpoint: original.endpoint,
      endpointRef: original.endpointRef,
      clientOrderId: original.clientOrderId,
      kind: original.kind,
      amountMinor: original.amountMinor,
      currency: original.currency,
      fingerprint: original.fingerprint,
      baseUrl: original.baseUrl,
      email: original.email,
      redirectUrl: original.redirectUrl,
      callbackUrl: undefined,
    });
    order.card = original.card;
    order.destination = original.destination;
    const op = this.addOp(order, first.type, first.amountMinor);
    op.dueAt = this.clock.now();
    this.finish(order, op, APPROVED);
    return order.orderId;
  }

  /** The ids of the orders with this client order id (any merchant). */
  ordersOf(clientOrderId: string): string[] {
    return [...this.orders.values()]
      .filter((o) => o.clientOrderId === clientOrderId)
      .map((o) => o.orderId);
  }

  describeOrder(orderId: string): Reply | undefined {
    const order = this.orders.get(orderId);
    return order ? this.statusReply(order, this.last(order)) : undefined;
  }

  recurringPlans(login?: string): Array<Record<string, string | number>> {
    return [...this.plans.values()]
      .filter((p) => login === undefined || p.login === login)
      .map((p) => ({
        'recurring-payment-id': p.id,
        'merchant-order-id': p.clientOrderId,
        charges: p.charges,
        'next-charge-at': new Date(p.nextAt).toISOString(),
      }));
  }

  get reusedClientOrderId(): ReuseMode {
    return this.reuseMode;
  }

  set reusedClientOrderId(mode: ReuseMode) {
    this.reuseMode = mode;
  }

  reset(): void {
    this.reuseMode = 'refuse';
    this.orders.clear();
    this.byClientOrderId.clear();
    this.byToken.clear();
    this.cardRefs.clear();
    this.cardRefByOrder.clear();
    this.plans.clear();
    this.pending.clear();
    this.openChecks.clear();
  }

  // ------------------------------------------------------------------ internals

  private applyDecision(
    order: Order,
    op: Operation,
    decision: CardDecision,
    delayMs: number,
  ): void {
    if (decision.kind === 'challenge') {
      this.startThreeDS(order, op, false);
      return;
    }
    op.pending = decision.result;
    op.dueAt = this.clock.now() + delayMs;
    this.pending.add(order);
  }

  private startThreeDS(order: Order, op: Operation, fromHostedPage: boolean): void {
    const token = this.token();
    order.threeDS = {
      stage: order.endpoint.threeDSMethod && !fromHostedPage ? 'method' : 'challenge',
      token,
      serverTransId: randomUUID(),
      acsTransId: randomUUID(),
      methodDeadline: this.clock.now() + this.settings.methodTimeoutMs,
      expiresAt:
        this.clock.now() +
        (this.settings.challengeTimeoutMs ?? DEFAULT_SETTINGS.challengeTimeoutMs ?? 600_000),
      compInd: undefined,
      passed: undefined,
    };
    this.byToken.set(token, order);
    op.dueAt = undefined;
    op.pending = undefined;
    this.pending.add(order);
  }

  private completeChallenge(order: Order, passed: boolean): void {
    const tds = order.threeDS;
    if (!tds) return;
    tds.stage = 'done';
    tds.passed = passed;
    const op = this.last(order);
    this.finish(
      order,
      op,
      passed ? { status: 'approved', verified3d: 'AUTHENTICATED' } : THREEDS_FAILED,
    );
  }

  private pendingThreeDS(order: Order): ThreeDS {
    const tds = order.threeDS;
    if (!tds || tds.stage === 'done') {
      throw new Refusal('no 3-D Secure authentication is pending for this order');
    }
    return tds;
  }

  /** Applies a result to an operation: status, money, ledger, callback. */
  private finish(order: Order, op: Operation, result: Result): void {
    if (op.status !== 'processing' && op.status !== 'unknown') return;
    op.status = result.status;
    op.result = result;
    op.pending = undefined;
    op.dueAt = op.dueAt ?? this.clock.now();
    const now = this.clock.now();
    if (result.status === 'approved') {
      op.approvalCode = String(100000 + (Number(order.orderId) % 900000));
      for (const [movement, amount] of movementsOnApproval(order, op)) {
        if (amount > 0) {
          this.ledger.record({
            at: now,
            login: order.login,
            clientOrderId: order.clientOrderId,
            orderId: order.orderId,
            serial: op.serial,
            movement,
            amountMinor: amount,
            currency: order.currency,
          });
        }
      }
      this.evolve(order, op, now);
    }
    this.notify(order, op);
  }

  /** The order's money figures after an approved operation. */
  private evolve(order: Order, op: Operation, now: number): void {
    switch (op.type) {
      case 'sale':
        order.capturedMinor = op.amountMinor;
        order.settleAt = now + this.settings.settlementDelayMs;
        return;
      case 'preauth':
        order.authorizedMinor = op.amountMinor;
        order.holdOpen = true;
        return;
      case 'capture':
        order.capturedMinor = op.amountMinor;
        order.holdOpen = false;
        order.settleAt = now + this.settings.settlementDelayMs;
        return;
      case 'void':
        if (order.holdOpen) order.holdOpen = false;
        else order.voided = true;
        return;
      case 'return':
        if (order.holdOpen) order.holdOpen = false;
        else order.refundedMinor += op.amountMinor;
        return;
      case 'payout':
      case 'transfer':
      case 'account-verification':
      case 'payout-check':
      case 'pan-eligibility':
        return;
    }
  }

  private notify(order: Order, op: Operation): void {
    const merchant = order.endpoint.merchant;
    if (!order.callbackUrl || !merchant.callbacksEnabled) return;
    const status = op.status;
    const params: Record<string, string> = {
      status,
      merchant_order: order.clientOrderId,
      client_orderid: order.clientOrderId,
      orderid: order.orderId,
      type: callbackType(op.type),
      amount: formatMinor(op.amountMinor, order.currency, order.endpoint.amountExponent),
      currency: order.currency,
      control: callbackControl(status, order.orderId, order.clientOrderId, merchant.controlKey),
    };
    const result = op.result;
    if (result?.errorMessage) params.error_message = result.errorMessage;
    if (result?.errorCode !== undefined) params.error_code = String(result.errorCode);
    if (op.approvalCode) params['approval-code'] = op.approvalCode;
    if (order.card) {
      params['last-four-digits'] = order.card.lastFour;
      params.bin = order.card.bin;
      if (order.card.brand) params['card-type'] = order.card.brand;
      if (order.card.holder) params.name = order.card.holder;
    }
    if (order.email) params.email = order.email;
    if (order.merchantData) params.merchantdata = order.merchantData;
    params.descriptor = 'sandbox';
    this.callbacks.enqueue({
      url: order.callbackUrl,
      params,
      login: order.login,
      clientOrderId: order.clientOrderId,
      endpointId: String(order.endpoint.id),
      maxAttempts: merchant.callbackMaxAttempts,
      ...(op.traceparent === undefined ? {} : { traceparent: op.traceparent }),
    });
  }

  private statusReply(order: Order, op: Operation): Reply {
    const reply: Reply = {
      type: 'status-response',
      status: op.status,
      amount: formatMinor(order.amountMinor, order.currency, order.endpoint.amountExponent),
      currency: order.currency,
      'paynet-order-id': order.orderId,
      'merchant-order-id': order.clientOrderId,
      'serial-number': this.serial(),
      'by-request-sn': op.serial,
      'transaction-type': op.type === 'return' ? 'reversal' : op.type,
      'order-stage': orderStage(order, op),
    };
    if (order.card) {
      reply['last-four-digits'] = order.card.lastFour;
      reply.bin = order.card.bin;
      if (order.card.brand) reply['card-type'] = order.card.brand;
      if (order.card.holder) reply['cardholder-name'] = order.card.holder;
      reply['card-exp-month'] = order.card.expMonth;
      reply['card-exp-year'] = order.card.expYear;
      reply['card-hash-id'] = order.card.panHash.slice(0, 20);
    }
    if (order.destination) reply['destination'] = order.destination;
    if (order.email) reply.email = order.email;
    if (op.approvalCode) {
      reply['approval-code'] = op.approvalCode;
      reply['processor-rrn'] = `${order.orderId}${op.serial.slice(-4)}`;
    }
    if (op.result?.errorMessage) reply['error-message'] = op.result.errorMessage;
    if (op.result?.errorCode !== undefined) reply['error-code'] = op.result.errorCode;
    const tds = order.threeDS;
    if (tds) {
      reply['verified-3d-status'] =
        tds.passed === undefined ? 'UNKNOWN' : tds.passed ? 'AUTHENTICATED' : 'NOT_AUTHENTICATED';
    } else if (op.result?.verified3d) {
      reply['verified-3d-status'] = op.result.verified3d;
    }
    if (op.status === 'processing' && tds && op === this.last(order)) {
      const acsUrl = `${order.baseUrl}/acs/${tds.token}`;
      if (tds.stage === 'method') {
        // Sandbox extension (facts §5: how merchants learn these is not public).
        reply['threeds-method-url'] = `${order.baseUrl}/3ds-method/${tds.token}`;
        reply['threeds-server-trans-id'] = tds.serverTransId;
      } else if (tds.stage === 'challenge') {
        reply['threeds-server-trans-id'] = tds.serverTransId;
        if (order.endpoint.threeDSAction === 'html') {
          reply.html = autoPostFragment(acsUrl, this.acsRequestFields(order, tds));
        } else {
          reply['redirect-to'] = acsUrl;
        }
      }
    }
    return reply;
  }

  private acsRequestFields(order: Order, tds: ThreeDS): Record<string, string> {
    if (order.endpoint.threeDSProtocol === '1.0.2') {
      return {
        PaReq: Buffer.from(`sandbox-pareq:${tds.serverTransId}`).toString('base64'),
        MD: order.orderId,
        TermUrl: order.redirectUrl ?? '',
      };
    }
    const creq = {
      threeDSServerTransID: tds.serverTransId,
      acsTransID: tds.acsTransId,
      messageType: 'CReq',
      messageVersion: '2.2.0',
      challengeWindowSize: '05',
    };
    return { creq: Buffer.from(JSON.stringify(creq)).toString('base64url') };
  }

  private challengeForm(order: Order, error?: string): string {
    const tds = order.threeDS;
    return acsChallengePage({
      action: `${order.baseUrl}/acs/${tds?.token ?? ''}/submit`,
      merchantOrder: order.clientOrderId,
      amount: formatMinor(order.amountMinor, order.currency, order.endpoint.amountExponent),
      currency: order.currency,
      lastFour: order.card?.lastFour ?? '',
      hint: this.merchants.acsPassword,
      error,
    });
  }

  private hostedForm(order: Order, error?: string): string {
    const destination = order.hosted?.destination ?? false;
    return hostedCardPage({
      action: `${order.baseUrl}/hpp/${order.hosted?.token ?? ''}`,
      title: destination ? 'Sandbox payout' : 'Sandbox payment',
      merchantOrder: order.clientOrderId,
      amount: formatMinor(order.amountMinor, order.currency, order.endpoint.amountExponent),
      currency: order.currency,
      destination,
      error,
    });
  }

  /** The signed POST back to redirect_url (facts §5): status, orderid, merchant_order, control. */
  private returnToMerchant(order: Order, op: Operation): string {
    const key = order.endpoint.merchant.controlKey;
    const fields = {
      status: op.status,
      orderid: order.orderId,
      merchant_order: order.clientOrderId,
      client_orderid: order.clientOrderId,
      control: callbackControl(op.status, order.orderId, order.clientOrderId, key),
    };
    if (!order.redirectUrl) return messagePage('Finished', `Payment ${op.status}.`);
    return autoPostPage('Returning to the merchant', order.redirectUrl, fields);
  }

  /** Own-3DS integrations: the ACS hands the CRes / PaRes to the merchant, who uploads it. */
  private handBackForUpload(order: Order, tds: ThreeDS, passed: boolean): string {
    const target = order.redirectUrl;
    if (!target) return messagePage('Finished', 'Challenge finished.');
    if (order.endpoint.threeDSProtocol === '1.0.2') {
      const pares = `<PARes><Purchase><xid>${tds.serverTransId}</xid></Purchase><TX><status>${passed ? 'Y' : 'N'}</status></TX></PARes>`;
      return autoPostPage('Returning to the merchant', target, {
        PaRes: Buffer.from(pares).toString('base64'),
        MD: order.orderId,
        orderid: order.orderId,
        merchant_order: order.clientOrderId,
      });
    }
    const cres = {
      messageType: 'CRes',
      messageVersion: '2.2.0',
      threeDSServerTransID: tds.serverTransId,
      acsTransID: tds.acsTransId,
      transStatus: passed ? 'Y' : 'N',
    };
    return autoPostPage('Returning to the merchant', target, {
      cres: Buffer.from(JSON.stringify(cres)).toString('base64'),
      orderid: order.orderId,
      merchant_order: order.clientOrderId,
    });
  }

  private referenced(r: EngineRequest, allowClientOrderIdOnly = false): Order {
    const f = r.fields;
    const login = opt(f, 'login') ?? r.oauthLogin;
    if (login === undefined) throw new Refusal('login is required');
    if (login !== r.endpoint.merchant.login) throw new Refusal('login does not match the endpoint');
    const clientOrderId = clientOrderIdOf(f);
    const orderId = opt(f, 'orderid');
    let order: Order | undefined;
    if (orderId !== undefined) {
      order = this.orders.get(orderId);
    } else if (allowClientOrderIdOnly && clientOrderId !== undefined) {
      order = this.byClientOrderId.get(`${login}|${clientOrderId}`);
    } else {
      throw new Refusal('orderid is required');
    }
    if (!order || order.login !== login) {
      throw new Refusal(
        orderId !== undefined
          ? `unknown orderid ${orderId}`
          : `unknown client_orderid ${clientOrderId ?? ''}`,
      );
    }
    if (clientOrderId === undefined) throw new Refusal('client_orderid is required');
    if (clientOrderId !== order.clientOrderId) {
      throw new Refusal('client_orderid does not match the order');
    }
    return order;
  }

  private cardRef(r: EngineRequest, id: string): CardRef {
    const ref = this.cardRefs.get(id);
    if (!ref || ref.login !== r.endpoint.merchant.login)
      throw new Refusal(`unknown card reference ${id}`);
    return ref;
  }

  private plan(r: EngineRequest, id: string): RecurringPlan {
    const plan = this.plans.get(id);
    if (!plan || plan.login !== r.endpoint.merchant.login) {
      throw new Refusal(`unknown recurring payment ${id}`);
    }
    return plan;
  }

  /**
   * Reused client_orderid (README "Decisions"): the same request again returns the order it
   * created, and nothing is charged twice; a different request with that id is refused. In the
   * `charge-again` mode nothing is replayed: the caller creates a second order, which then owns
   * the client_orderid for lookups by it alone.
   */
  private replay(r: EngineRequest, clientOrderId: string, fingerprint: string): Reply | undefined {
    if (this.reuseMode === 'charge-again') return undefined;
    const existing = this.byClientOrderId.get(`${r.endpoint.merchant.login}|${clientOrderId}`);
    if (!existing) return undefined;
    if (existing.fingerprint === fingerprint) return existing.firstReply;
    throw new Refusal(
      `client_orderid ${clientOrderId} is already used by order ${existing.orderId}`,
      2,
    );
  }

  private newOrder(
    r: EngineRequest,
    o: {
      kind: OrderKind;
      clientOrderId: string;
      amountMinor: number;
      currency: string;
      fingerprint: string;
    } & Contacts,
  ): Order {
    const order = this.storeOrder({
      ...o,
      orderId: String(this.nextOrderId++),
      login: r.endpoint.merchant.login,
      endpoint: r.endpoint,
      endpointRef: r.endpointRef,
      baseUrl: r.baseUrl,
    });
    const merchantData = opt(r.fields, 'merchant_data');
    return merchantData === undefined ? order : Object.assign(order, { merchantData });
  }

  private storeOrder(
    o: {
      orderId: string;
      login: string;
      endpoint: Endpoint;
      endpointRef: string;
      clientOrderId: string;
      kind: OrderKind;
      amountMinor: number;
      currency: string;
      fingerprint: string;
      baseUrl: string;
    } & Contacts,
  ): Order {
    const order: Order = {
      ...o,
      email: o.email,
      redirectUrl: o.redirectUrl,
      callbackUrl: o.callbackUrl,
      createdAt: this.clock.now(),
      merchantData: undefined,
      ops: [],
      card: undefined,
      destination: undefined,
      firstReply: {},
      authorizedMinor: 0,
      holdOpen: false,
      capturedMinor: 0,
      refundedMinor: 0,
      voided: false,
      settleAt: undefined,
      threeDS: undefined,
      hosted: undefined,
      payoutCheck: undefined,
      forced: undefined,
    };
    this.orders.set(order.orderId, order);
    this.byClientOrderId.set(`${order.login}|${order.clientOrderId}`, order);
    return order;
  }

  private addOp(order: Order, type: OpType, amountMinor: number): Operation {
    const op: Operation = {
      serial: this.serial(),
      type,
      amountMinor,
      createdAt: this.clock.now(),
      status: 'processing',
      dueAt: undefined,
      pending: undefined,
      result: undefined,
      approvalCode: undefined,
      traceparent: this.currentTrace(),
    };
    order.ops.push(op);
    return op;
  }

  /** The reply of the request that created the order, kept: the same request again gets it. */
  private firstReply(
    order: Order,
    op: Operation,
    extra: Reply = {},
    type = 'async-response',
  ): Reply {
    const reply = { ...this.envelope(type, order, op), ...extra };
    order.firstReply = reply;
    return reply;
  }

  /** Adds an operation that goes on toward `decision` (after the endpoint's delay, or 3DS). */
  private submit(
    r: EngineRequest,
    order: Order,
    type: OpType,
    amountMinor: number,
    decision: CardDecision,
  ): Operation {
    const op = this.addOp(order, type, amountMinor);
    this.applyDecision(order, op, decision, r.endpoint.processingDelayMs);
    return op;
  }

  /** An operation on an existing order (capture, void, return, payout-pay), answered at once. */
  private followUp(
    r: EngineRequest,
    order: Order,
    type: OpType,
    amountMinor: number,
    decision: CardDecision = payerAbsent(r.forced, undefined),
  ): Reply {
    return this.envelope(
      'async-response',
      order,
      this.submit(r, order, type, amountMinor, decision),
    );
  }

  private envelope(type: string, order: Order, op: Operation): Reply {
    return {
      type,
      'serial-number': op.serial,
      'merchant-order-id': order.clientOrderId,
      'paynet-order-id': order.orderId,
      'end-point-id': order.endpointRef,
    };
  }

  private validationError(message: string, code: number, r: EngineRequest): Reply {
    const body: Reply = {
      type: 'validation-error',
      'serial-number': this.serial(),
      'error-message': message,
      'error-code': code,
    };
    const clientOrderId = clientOrderIdOf(r.fields);
    if (clientOrderId !== undefined) body['merchant-order-id'] = clientOrderId;
    return body;
  }

  private requireIdle(order: Order): void {
    if (order.ops.some((o) => o.status === 'processing' || o.status === 'unknown')) {
      throw new Refusal('another operation on this order is still processing or unknown');
    }
  }

  private finalSuccess(order: Order): boolean {
    const money = order.ops.filter((o) => o.type === 'sale' || o.type === 'capture');
    return money.some((o) => o.status === 'approved');
  }

  private optPartialAmount(f: Fields, order: Order): { amount: number; partial: boolean } {
    const amountText = opt(f, 'amount');
    const currency = opt(f, 'currency');
    if (amountText === undefined) {
      if (currency !== undefined && currency !== order.currency) {
        throw new Refusal('currency does not match the order');
      }
      return { amount: 0, partial: false };
    }
    if (currency === undefined) throw new Refusal('currency is required together with amount');
    if (currency !== order.currency) throw new Refusal('currency does not match the order');
    return { amount: reqAmount(f, currency, order.endpoint.amountExponent), partial: true };
  }

  /** Currency and amount of a new order, for the endpoint's currency; zero for a verification. */
  private pricing(r: EngineRequest, zeroAmount = false): { currency: string; amount: number } {
    const currency = zeroAmount ? this.avCurrency(r) : reqCurrency(r.fields);
    const amount = zeroAmount
      ? this.avAmount(r.fields, currency)
      : reqPositiveAmount(r.fields, currency, r.endpoint.amountExponent);
    this.checkCurrency(r.endpoint, currency);
    return { currency, amount: zeroAmount ? amount : (r.processedAmountMinor ?? amount) };
  }

  private avCurrency(r: EngineRequest): string {
    return opt(r.fields, 'currency') === undefined ? r.endpoint.currency : reqCurrency(r.fields);
  }

  private avAmount(f: Fields, currency: string): number {
    const minor = optAmount(f, currency) ?? 0;
    if (minor !== 0) throw new Refusal('account verification is a zero-amount operation');
    return 0;
  }

  private checkCurrency(endpoint: Endpoint, currency: string): void {
    if (currency !== endpoint.currency) {
      throw new Refusal(`endpoint ${endpoint.id} does not process ${currency}`);
    }
  }

  private last(order: Order): Operation {
    const op = order.ops[order.ops.length - 1];
    if (!op) throw new Error(`order ${order.orderId} has no operation`);
    return op;
  }

  private ops(order: Order): readonly Operation[] {
    return order.ops;
  }

  private summarize(card: CardInput): CardSummary {
    return {
      bin: card.pan.slice(0, 6),
      lastFour: card.pan.slice(-4),
      brand: card.brand,
      holder: card.holder,
      expMonth: card.expMonth,
      expYear: card.expYear,
      panHash: createHmac('sha256', this.panKey).update(card.pan).digest('hex'),
    };
  }

  private serial(): string {
    const n = (this.nextSerial++).toString(16).padStart(12, '0');
    return `00000000-0000-0000-0000-${n}`;
  }

  private token(): string {
    return randomBytes(16).toString('hex');
  }
}

/** Where the order's payer and merchant are reached; all optional. */
interface Contacts {
  readonly email?: string | undefined;
  readonly redirectUrl?: string | undefined;
  readonly callbackUrl?: string | undefined;
}

function optContacts(f: Fields): Contacts {
  return {
    email: opt(f, 'email'),
    redirectUrl: optUrl(f, 'redirect_url'),
    callbackUrl: optUrl(f, 'server_callback_url'),
  };
}

function optCvv(f: Fields): string | undefined {
  const cvv = opt(f, 'cvv2');
  if (cvv !== undefined && !/^\d{3,4}$/.test(cvv)) throw new Refusal('cvv2 must be 3 or 4 digits');
  return cvv;
}

/** The payer at the card (sale, preauth, hosted page): forced, else by the CVV, 3DS gated. */
function payerPresent(
  forced: Result | undefined,
  cvv: string | undefined,
  threeDSGate: boolean,
): CardDecision {
  if (forced) return { kind: 'result', result: forced };
  return decideByCvv(cvv ?? '', { threeDSGate, payerPresent: true });
}

/** No payer (rebill, payout, transfer): forced, else by the CVV when given, else approved. */
function payerAbsent(forced: Result | undefined, cvv: string | undefined): CardDecision {
  if (forced) return { kind: 'result', result: forced };
  if (cvv === undefined) return { kind: 'result', result: APPROVED };
  return decideByCvv(cvv, { threeDSGate: false, payerPresent: false });
}

function html(status: number, body: string): PageResult {
  return { kind: 'html', status, html: body };
}

function callbackType(type: OpType): string {
  return type === 'return' ? 'reversal' : type;
}

function orderStage(order: Order, op: Operation): string {
  if (order.payoutCheck?.state === 'expired') return 'payout_check_expired';
  if (op.status === 'processing' && order.threeDS && order.threeDS.stage !== 'done') {
    return `${op.type}_3d_validating`;
  }
  if (op.status === 'processing' && order.hosted && !order.hosted.submitted) {
    return `${op.type}_awaiting_payer`;
  }
  const word: Record<Status, string> = {
    approved: 'approved',
    declined: 'declined',
    error: 'failed',
    filtered: 'filtered',
    processing: 'processing',
    unknown: 'unknown',
  };
  return `${op.type.replace(/-/g, '_')}_${word[op.status]}`;
}

export function addPeriod(at: number, period: 'day' | 'week' | 'month', interval: number): number {
  switch (period) {
    case 'day':
      return at + interval * 86_400_000;
    case 'week':
      return at + interval * 7 * 86_400_000;
    case 'month': {
      const d = new Date(at);
      const day = d.getUTCDate();
      d.setUTCDate(1);
      d.setUTCMonth(d.getUTCMonth() + interval);
      const last = new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate();
      d.setUTCDate(Math.min(day, last));
      return d.getTime();
    }
  }
}

function decodeBase64Json(text: string): Record<string, unknown> | undefined {
  const decoded = decodeBase64Text(text);
  if (decoded === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(decoded);
    return value !== null && typeof value === 'object'
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function decodeBase64Text(text: string): string | undefined {
  const normalized = text.replace(/-/g, '+').replace(/_/g, '/').replace(/\s/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(normalized) || normalized.length === 0) return undefined;
  return Buffer.from(normalized, 'base64').toString('utf8');
}

export type { FinalStatus };
