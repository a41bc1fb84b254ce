import { createHmac, randomBytes, randomUUID } from 'node:crypto';
import { Clock } from '../clock';
import { CardInput, Refusal, clientOrderIdOf, opt } from '../fields';
import { Ledger } from '../ledger';
import { Endpoint } from '../merchants';
import { CardDecision, Result, THREEDS_TIMED_OUT } from '../outcomes';
import {
  CallbackSink,
  CardRef,
  CardSummary,
  Contacts,
  DEFAULT_SETTINGS,
  EngineRequest,
  EngineSettings,
  OpType,
  Operation,
  Order,
  OrderKind,
  RecurringPlan,
  Reply,
  ReuseMode,
} from './model';
import { envelope } from './replies';
import { payerAbsent } from './requests';
import { callbackParams, evolveOnApproval, movementsOnApproval } from './settlement';

/** A request that opens an order, once its fields have passed validation. */
export interface OrderRequest extends Contacts {
  readonly kind: OrderKind;
  readonly clientOrderId: string;
  readonly amountMinor: number;
  readonly currency: string;
  /**
   * What, besides the operation, makes a repeated request the same one (amount, currency, the
   * card's last four, the destination…): the same again is answered with the first reply.
   */
  readonly identity: ReadonlyArray<string | number>;
  readonly card?: CardSummary | undefined;
  readonly destination?: string | undefined;
  /**
   * Optional contacts read only for a new order, after the replay check: a repeat is answered
   * with the first reply whatever its optional contact fields say.
   */
  readonly laterContacts?: () => Contacts;
}

/** The order's first operation, made by the operation family, and what its reply adds. */
export interface Opened {
  readonly op: Operation;
  readonly extra?: Reply;
  /** The reply type; `async-response` unless the family says otherwise. */
  readonly type?: string;
}

/**
 * The engine's state and the rules every operation family shares: orders and their operations,
 * the replay of a repeated client_orderid, the new-order pipeline, processing delays, 3-D Secure
 * blocking, the result of an operation with its ledger movements and callback, and what time
 * finishes. Families parse and check their requests and ask the store for the rest.
 */
export class OrderStore {
  readonly orders = new Map<string, Order>();
  readonly byToken = new Map<string, Order>();
  readonly cardRefs = new Map<string, CardRef>();
  readonly cardRefByOrder = new Map<string, CardRef>();
  readonly plans = new Map<string, RecurringPlan>();
  /** Two-step payouts whose check is neither paid nor expired (kept apart: settle runs often). */
  readonly openChecks = new Set<Order>();
  private readonly byClientOrderId = new Map<string, Order>();
  private readonly pending = new Set<Order>();
  private nextOrderId = 1_000_001;
  private nextSerial = 1;
  private nextRef = 500_001;
  private readonly panKey = randomBytes(32);
  reuseMode: ReuseMode = 'refuse';

  constructor(
    readonly clock: Clock,
    private readonly ledger: Ledger,
    private readonly callbacks: CallbackSink,
    readonly settings: EngineSettings,
    private readonly currentTrace: () => string | undefined,
  ) {}

  // ------------------------------------------------------------------ new orders

  /**
   * The one path of a request that opens an order: the replay check, the new order, its first
   * operation (`start`, by the family), and the first reply, kept for a repeat of the request.
   */
  open(r: EngineRequest, request: OrderRequest, start: (order: Order) => Opened): Reply {
    const { identity, card, destination, laterContacts, ...fields } = request;
    const fingerprint = [r.op, ...identity].join('|');
    const replayed = this.replay(r, request.clientOrderId, fingerprint);
    if (replayed) return replayed;
    const order = this.storeOrder({
      ...fields,
      ...laterContacts?.(),
      fingerprint,
      orderId: this.newOrderId(),
      login: r.endpoint.merchant.login,
      endpoint: r.endpoint,
      endpointRef: r.endpointRef,
      baseUrl: r.baseUrl,
    });
    const merchantData = opt(r.fields, 'merchant_data');
    if (merchantData !== undefined) Object.assign(order, { merchantData });
    if (card !== undefined) order.card = card;
    if (destination !== undefined) order.destination = destination;
    const { op, extra = {}, type = 'async-response' } = start(order);
    const reply = { ...envelope(type, order, op), ...extra };
    order.firstReply = reply;
    return reply;
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

  newOrderId(): string {
    return String(this.nextOrderId++);
  }

  /** Keeps a new order; it owns its client_orderid for lookups by it alone from now on. */
  storeOrder(
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

  /** The order a client_orderid names for a merchant (the latest one), if any. */
  byClientOrder(login: string, clientOrderId: string): Order | undefined {
    return this.byClientOrderId.get(`${login}|${clientOrderId}`);
  }

  // ------------------------------------------------------------------ operations

  addOp(order: Order, type: OpType, amountMinor: number): Operation {
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

  /** Adds an operation that goes on toward `decision` (after the endpoint's delay, or 3DS). */
  submit(
    r: EngineRequest,
    order: Order,
    type: OpType,
    amountMinor: number,
    decision: CardDecision,
  ): Operation {
    const op = this.addOp(order, type, amountMinor);
    if (decision.kind === 'challenge') {
      this.startThreeDS(order, op, false);
    } else {
      op.pending = decision.result;
      op.dueAt = this.clock.now() + (r.processingDelayMs ?? r.endpoint.processingDelayMs);
      this.pending.add(order);
    }
    return op;
  }

  /** An operation on an existing order (capture, void, return, payout-pay), answered at once. */
  followUp(
    r: EngineRequest,
    order: Order,
    type: OpType,
    amountMinor: number,
    decision: CardDecision = payerAbsent(r.forced, undefined),
  ): Reply {
    return envelope('async-response', order, this.submit(r, order, type, amountMinor, decision));
  }

  /** Blocks the operation on the payer's 3-D Secure step (a method step first, if configured). */
  startThreeDS(order: Order, op: Operation, fromHostedPage: boolean): void {
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

  /** Applies a result to an operation: status, money, ledger, callback. */
  finish(order: Order, op: Operation, result: Result): void {
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
      evolveOnApproval(order, op, now, this.settings.settlementDelayMs);
    }
    this.notify(order, op);
  }

  private notify(order: Order, op: Operation): void {
    const merchant = order.endpoint.merchant;
    if (!order.callbackUrl || !merchant.callbacksEnabled) return;
    this.callbacks.enqueue({
      url: order.callbackUrl,
      params: callbackParams(order, op),
      login: order.login,
      clientOrderId: order.clientOrderId,
      endpointId: String(order.endpoint.id),
      maxAttempts: merchant.callbackMaxAttempts,
      ...(op.traceparent === undefined ? {} : { traceparent: op.traceparent }),
    });
  }

  // ------------------------------------------------------------------ time

  /** Finishes the orders' due processing, 3-D Secure timeouts and payout-check expiries. */
  settleOrders(now: number): void {
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
  }

  // ------------------------------------------------------------------ lookups

  /** The order a follow-up names by orderid (or, for a status query, by client_orderid alone). */
  referenced(r: EngineRequest, allowClientOrderIdOnly = false): Order {
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
      order = this.byClientOrder(login, clientOrderId);
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

  cardRef(r: EngineRequest, id: string): CardRef {
    const ref = this.cardRefs.get(id);
    if (!ref || ref.login !== r.endpoint.merchant.login)
      throw new Refusal(`unknown card reference ${id}`);
    return ref;
  }

  plan(r: EngineRequest, id: string): RecurringPlan {
    const plan = this.plans.get(id);
    if (!plan || plan.login !== r.endpoint.merchant.login) {
      throw new Refusal(`unknown recurring payment ${id}`);
    }
    return plan;
  }

  last(order: Order): Operation {
    const op = order.ops[order.ops.length - 1];
    if (!op) throw new Error(`order ${order.orderId} has no operation`);
    return op;
  }

  requireIdle(order: Order): void {
    if (order.ops.some((o) => o.status === 'processing' || o.status === 'unknown')) {
      throw new Refusal('another operation on this order is still processing or unknown');
    }
  }

  // ------------------------------------------------------------------ identifiers

  summarize(card: CardInput): CardSummary {
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

  /** Card references and recurring payments share one numbering. */
  newRefId(): string {
    return String(this.nextRef++);
  }

  serial(): string {
    const n = (this.nextSerial++).toString(16).padStart(12, '0');
    return `00000000-0000-0000-0000-${n}`;
  }

  token(): string {
    return randomBytes(16).toString('hex');
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
}
