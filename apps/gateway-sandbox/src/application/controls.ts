import { ConcurrencyGauge } from '../domain/concurrency';
import { z } from 'zod';
import { VirtualClock } from '../domain/clock';
import { SandboxEngine } from '../domain/engine';
import { FaultRegistry } from '../domain/faults';
import { Ledger } from '../domain/ledger';
import { formatMinor } from '../domain/money';
import { OPERATIONS } from '../domain/operations';
import { forcedResult } from '../domain/outcomes';
import { CallbackDispatcher } from './callback-dispatcher';

export interface ControlReply {
  readonly status: number;
  readonly body: unknown;
}

const OPERATION_NAMES = new Set<string>(OPERATIONS.map((o) => o.name));

const faultSchema = z
  .object({
    login: z.string().optional(),
    clientOrderId: z.string().optional(),
    /** An operation name as the spec gives it (SALE, CAPTURE, STATUS, …); a typo would never match. */
    operation: z
      .string()
      .refine((name) => OPERATION_NAMES.has(name), {
        error: () => `one of ${[...OPERATION_NAMES].join(', ')}`,
      })
      .optional(),
    /** An endpoint or endpoint-group id as in the request path, or the resolved endpoint id. */
    endpoint: z
      .string()
      .regex(/^\d{1,18}$/, { error: 'an endpoint id (digits)' })
      .optional(),
    probability: z.number().min(0).max(1).optional(),
    latencyMs: z.number().int().min(0).max(120_000).optional(),
    latencyAfterMs: z.number().int().min(0).max(120_000).optional(),
    failBefore: z.union([z.number().int().min(400).max(599), z.literal('drop')]).optional(),
    failAfter: z.union([z.number().int().min(500).max(599), z.literal('drop')]).optional(),
    outcome: z.enum(['approved', 'declined', 'error', 'filtered', 'unknown']).optional(),
    processedAmountMinor: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
    replyAmount: z.string().min(1).max(32).optional(),
    replyTransactionType: z.string().min(1).max(32).optional(),
    processingDelayMs: z.number().int().min(0).max(86_400_000).optional(),
    callbacks: z.enum(['drop', 'duplicate', 'delay', 'reorder', 'no-currency']).optional(),
    callbackDelayMs: z.number().int().min(0).max(600_000).optional(),
    times: z.number().int().positive().optional(),
  })
  .strict();

const settingsSchema = z
  .object({
    /** Seed of the probability draws; setting it restarts them. */
    faultSeed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .optional(),
    reusedClientOrderId: z.enum(['refuse', 'charge-again']).optional(),
    callbackRetry: z
      .object({
        maxAttempts: z.number().int().min(1).max(100).optional(),
        baseDelayMs: z.number().int().min(1).max(86_400_000).optional(),
        maxDelayMs: z.number().int().min(1).max(86_400_000).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

const advanceSchema = z
  .object({ ms: z.number().int().min(0).optional(), seconds: z.number().int().min(0).optional() })
  .strict();

const resolveSchema = z
  .object({ status: z.enum(['approved', 'declined', 'error', 'filtered']) })
  .strict();

/**
 * Test-only controls (`/_sandbox/...`, served only with SANDBOX_TEST_CONTROLS=true): the ledger,
 * fault injection, the virtual clock, callback log, reconciliation of unknown outcomes, reset.
 */
export class SandboxControls {
  constructor(
    private readonly engine: SandboxEngine,
    private readonly ledger: Ledger,
    private readonly faults: FaultRegistry,
    private readonly clock: VirtualClock,
    private readonly dispatcher: CallbackDispatcher,
    private readonly concurrency: ConcurrencyGauge = new ConcurrencyGauge(),
  ) {}

  /** Requests in flight per endpoint, and the most at once since the last reset. */
  concurrencyView(): ControlReply {
    return { status: 200, body: this.concurrency.view() };
  }

  resetConcurrency(): ControlReply {
    this.concurrency.reset();
    return { status: 200, body: this.concurrency.view() };
  }

  ledgerView(login?: string, clientOrderId?: string): ControlReply {
    const filter = { login, clientOrderId };
    const entries = this.ledger.list(filter).map((e) => ({
      ...e,
      amount: formatMinor(e.amountMinor, e.currency),
    }));
    return { status: 200, body: { entries, totals: this.ledger.totals(filter) } };
  }

  addFault(body: unknown): ControlReply {
    const parsed = faultSchema.safeParse(body);
    if (!parsed.success) return invalid(parsed.error);
    const { times, ...rule } = parsed.data;
    return { status: 201, body: this.faults.add({ ...rule, remaining: times }) };
  }

  listFaults(): ControlReply {
    return { status: 200, body: this.faults.list() };
  }

  removeFault(id?: string): ControlReply {
    if (id === undefined) {
      this.faults.clear();
      return { status: 200, body: { removed: 'all' } };
    }
    return this.faults.remove(id)
      ? { status: 200, body: { removed: id } }
      : { status: 404, body: { error: `no fault ${id}` } };
  }

  clockView(): ControlReply {
    return {
      status: 200,
      body: { now: new Date(this.clock.now()).toISOString(), offsetMs: this.clock.offset },
    };
  }

  advance(body: unknown): ControlReply {
    const parsed = advanceSchema.safeParse(body);
    if (!parsed.success) return invalid(parsed.error);
    const ms = (parsed.data.ms ?? 0) + (parsed.data.seconds ?? 0) * 1000;
    this.clock.advance(ms);
    this.engine.settle();
    return this.clockView();
  }

  settings(): ControlReply {
    return {
      status: 200,
      body: {
        faultSeed: this.faults.seed,
        reusedClientOrderId: this.engine.reusedClientOrderId,
        callbackRetry: this.dispatcher.retrySettings(),
      },
    };
  }

  changeSettings(body: unknown): ControlReply {
    const parsed = settingsSchema.safeParse(body);
    if (!parsed.success) return invalid(parsed.error);
    const { faultSeed, reusedClientOrderId, callbackRetry } = parsed.data;
    if (faultSeed !== undefined) this.faults.reseed(faultSeed);
    if (reusedClientOrderId !== undefined) this.engine.reusedClientOrderId = reusedClientOrderId;
    if (callbackRetry !== undefined) this.dispatcher.configureRetry(callbackRetry);
    return this.settings();
  }

  callbacks(clientOrderId?: string): ControlReply {
    return {
      status: 200,
      body: {
        idle: this.dispatcher.idle(clientOrderId),
        attempts: this.dispatcher.log(clientOrderId),
      },
    };
  }

  order(orderId: string): ControlReply {
    const reply = this.engine.describeOrder(orderId);
    return reply ? { status: 200, body: reply } : { status: 404, body: { error: 'no such order' } };
  }

  resolve(orderId: string, body: unknown): ControlReply {
    const parsed = resolveSchema.safeParse(body);
    if (!parsed.success) return invalid(parsed.error);
    return this.engine.resolve(orderId, forcedResult(parsed.data.status))
      ? this.order(orderId)
      : { status: 409, body: { error: 'no such order, or its last operation is already final' } };
  }

  /** The orders with this client order id: their ids and status replies. */
  orders(clientOrderId: string | undefined): ControlReply {
    if (clientOrderId === undefined || clientOrderId === '') {
      return { status: 400, body: { error: 'clientOrderId is required' } };
    }
    const ids = this.engine.ordersOf(clientOrderId);
    return {
      status: 200,
      body: ids.map((orderId) => ({ orderId, status: this.engine.describeOrder(orderId) })),
    };
  }

  /** Rewrites the last operation's status without a ledger movement or callback (reconciliation tests). */
  override(orderId: string, body: unknown): ControlReply {
    const parsed = resolveSchema.safeParse(body);
    if (!parsed.success) return invalid(parsed.error);
    return this.engine.override(orderId, forcedResult(parsed.data.status))
      ? this.order(orderId)
      : { status: 404, body: { error: 'no such order' } };
  }

  /**
   * Plants a second charge under the order's client order id (a new order, approved, charged in
   * the ledger, no callback; reconciliation tests): the new order's id and status reply.
   */
  chargeAgain(orderId: string): ControlReply {
    const created = this.engine.chargeAgain(orderId);
    return created === undefined
      ? { status: 404, body: { error: 'no such order, or it is no sale or payout' } }
      : { status: 201, body: { orderId: created, status: this.engine.describeOrder(created) } };
  }

  recurring(login?: string): ControlReply {
    return { status: 200, body: this.engine.recurringPlans(login) };
  }

  reset(): ControlReply {
    this.engine.reset();
    this.ledger.reset();
    this.faults.clear();
    this.faults.reseed(0);
    this.dispatcher.reset();
    this.clock.reset();
    this.concurrency.reset();
    return { status: 200, body: { reset: true } };
  }
}

function invalid(error: z.ZodError): ControlReply {
  return {
    status: 400,
    body: {
      error: error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
    },
  };
}
