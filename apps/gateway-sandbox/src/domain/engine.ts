import { Clock } from './clock';
import { Fields, Refusal } from './fields';
import { Ledger } from './ledger';
import { MerchantRegistry } from './merchants';
import { APPROVED, Result, isFinal } from './outcomes';
import { addPeriod, chargeDuePlans } from './engine/families/card-refs-recurring';
import { hostedPage, hostedSubmit } from './engine/families/hosted-forms';
import { acsPage, acsSubmit, methodPage } from './engine/families/three-ds';
import {
  CallbackSink,
  DEFAULT_SETTINGS,
  EngineRequest,
  EngineResult,
  EngineSettings,
  PageResult,
  Reply,
  ReuseMode,
} from './engine/model';
import { OrderStore } from './engine/order-store';
import { statusReply, validationError } from './engine/replies';
import { ROUTES } from './engine/routes';

export type {
  CallbackDelivery,
  CallbackSink,
  EngineRequest,
  EngineResult,
  EngineSettings,
  PageResult,
  Reply,
  ReuseMode,
} from './engine/model';
export type { FinalStatus } from './outcomes';
export { DEFAULT_SETTINGS, addPeriod };

/**
 * The gateway's behaviour, framework-free: orders and their operations, the state machine with
 * its preconditions, CVV outcomes, 3-D Secure, hosted pages, card references, recurring
 * schedules, two-step payouts, the ledger and callbacks. Time comes from the injected clock.
 *
 * This class is the engine's surface: an API request goes through the operation table
 * (`engine/routes.ts`) to its family's handler, which works on the order store
 * (`engine/order-store.ts`); pages, time and the test controls are answered here.
 */
export class SandboxEngine {
  private readonly store: OrderStore;

  constructor(
    private readonly merchants: MerchantRegistry,
    clock: Clock,
    ledger: Ledger,
    callbacks: CallbackSink,
    settings: EngineSettings = DEFAULT_SETTINGS,
    /** The caller's trace as a W3C traceparent (the application's tracing), kept per operation. */
    currentTrace: () => string | undefined = () => undefined,
  ) {
    this.store = new OrderStore(clock, ledger, callbacks, settings, currentTrace);
  }

  // ------------------------------------------------------------------ API operations

  execute(request: EngineRequest): EngineResult {
    this.settle();
    try {
      const body = ROUTES[request.op](this.store, request);
      this.settle();
      return { kind: 'ok', body };
    } catch (error) {
      if (error instanceof Refusal) {
        const body = validationError(
          error.message,
          error.code,
          request.fields,
          this.store.serial(),
        );
        return { kind: 'refused', body };
      }
      throw error;
    }
  }

  // ------------------------------------------------------------------ pages

  hostedPage(token: string): PageResult {
    return hostedPage(this.store, token);
  }

  hostedSubmit(token: string, fields: Fields): PageResult {
    this.settle();
    return hostedSubmit(this.store, token, fields);
  }

  methodPage(token: string): PageResult {
    return methodPage(this.store, token);
  }

  acsPage(token: string): PageResult {
    this.settle();
    return acsPage(this.store, token, this.merchants.acsPassword);
  }

  acsSubmit(token: string, fields: Fields): PageResult {
    this.settle();
    return acsSubmit(this.store, token, fields, this.merchants.acsPassword);
  }

  // ------------------------------------------------------------------ time

  /** Finishes what is due at the clock's time: processing, timeouts, expiries, schedules. */
  settle(): void {
    const now = this.store.clock.now();
    this.store.settleOrders(now);
    chargeDuePlans(this.store, now);
  }

  // ------------------------------------------------------------------ test controls

  /** Reconciliation: moves an operation left in `unknown` (or processing) to a final status. */
  resolve(orderId: string, result: Result): boolean {
    const s = this.store;
    const order = s.orders.get(orderId);
    const op = order ? s.last(order) : undefined;
    if (!order || !op || isFinal(op.status)) return false;
    op.dueAt = s.clock.now();
    s.finish(order, op, result);
    return true;
  }

  /**
   * Plants a reconciliation mismatch: rewrites what status replies say about the order's last
   * operation, final or not, silently — no ledger movement, no callback — as a change made on the
   * gateway's side that nothing told the merchant about.
   */
  override(orderId: string, result: Result): boolean {
    const s = this.store;
    const order = s.orders.get(orderId);
    const op = order ? s.last(order) : undefined;
    if (!order || !op) return false;
    op.status = result.status;
    op.result = result;
    op.pending = undefined;
    op.dueAt = op.dueAt ?? s.clock.now();
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
    const s = this.store;
    const original = s.orders.get(orderId);
    const first = original?.ops[0];
    if (!original || !first || (first.type !== 'sale' && first.type !== 'payout')) {
      return undefined;
    }
    const order = s.storeOrder({
      orderId: s.newOrderId(),
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
    const op = s.addOp(order, first.type, first.amountMinor);
    op.dueAt = s.clock.now();
    s.finish(order, op, APPROVED);
    return order.orderId;
  }

  /** The ids of the orders with this client order id (any merchant). */
  ordersOf(clientOrderId: string): string[] {
    return [...this.store.orders.values()]
      .filter((o) => o.clientOrderId === clientOrderId)
      .map((o) => o.orderId);
  }

  describeOrder(orderId: string): Reply | undefined {
    const order = this.store.orders.get(orderId);
    return order
      ? statusReply(order, this.store.last(order), this.store.serial(), true)
      : undefined;
  }

  recurringPlans(login?: string): Array<Record<string, string | number>> {
    return [...this.store.plans.values()]
      .filter((p) => login === undefined || p.login === login)
      .map((p) => ({
        'recurring-payment-id': p.id,
        'merchant-order-id': p.clientOrderId,
        charges: p.charges,
        'next-charge-at': new Date(p.nextAt).toISOString(),
      }));
  }

  get reusedClientOrderId(): ReuseMode {
    return this.store.reuseMode;
  }

  set reusedClientOrderId(mode: ReuseMode) {
    this.store.reuseMode = mode;
  }

  reset(): void {
    this.store.reset();
  }
}
