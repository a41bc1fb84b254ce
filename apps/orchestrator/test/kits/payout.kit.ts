/**
 * given/when/then for the two-step payout decider and its daily budget (test support only).
 *
 *   payout().check().registered().when(approve()).then('payout-approved')
 *
 * `approveThroughBudget` runs an approval the way the runtime does in one transaction: the
 * approval, the budget saga's reservation, and the budget's answer back to the payout.
 */
import type {
  ApprovePayoutCommand,
  GatewayClassification,
  GatewayResult,
  GatewayStatusReport,
  OneStepPayoutCommand,
  PayoutBudgetAnswerCommand,
  PayoutBudgetEvent,
  PayoutOperation,
  PayoutV4Command,
  PayoutFormCommand,
  PayoutCheckCommand,
  PayoutEvent,
  RejectPayoutCommand,
  RefreshPayoutStatusCommand,
} from '@payments/contracts';
import { PLACEHOLDER_SEALED_CARD } from '@payments/contracts/testing';
import {
  type BudgetRequest,
  type BudgetState,
  decideBudget,
  decidePayout,
  evolveBudget,
  foldPayout,
  initialBudgetState,
  initialPayoutState,
  payoutBudgetId,
  type PayoutEffect,
  type PayoutInput,
  type PayoutPolicy,
  type PayoutState,
  type PayoutTimer,
  type PublishHeldRequest,
} from '../../src/flows/payout/domain';
import type { PayoutDecision } from '../../src/flows/payout/domain/model';
import { idSequence, T0 } from './card-payment.kit';

export { at, T0 } from './card-payment.kit';

export const ENDPOINT = '1234';
export const MERCHANT = { endpointId: ENDPOINT } as const;
let counter = 0;
export const uuid = (n = ++counter) =>
  `20000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

export const POLICY: PayoutPolicy = {
  limits: {
    default: { maxMinor: 1_000_000, dailyLimitMinor: 100_000, approvalWindowMs: 10 * 60_000 },
  },
  maxSendAttempts: 3,
  unknownAlertAfterMs: 3_600_000,
  neverReceivedAfterMs: 60_000,
  ownLimitWaitMs: 600_000,
};

export function payoutCheck(payoutId: string, minor = 5_000): PayoutCheckCommand {
  return {
    type: 'payout-check',
    commandId: uuid(),
    payoutId,
    merchant: MERCHANT,
    occurredAt: T0,
    amount: { minor, currency: 'EUR' },
    sealedCard: PLACEHOLDER_SEALED_CARD,
  };
}

export function approve(payoutId: string, by = 'finance@example.com'): ApprovePayoutCommand {
  return {
    type: 'approve-payout',
    commandId: uuid(),
    payoutId,
    merchant: MERCHANT,
    occurredAt: T0,
    approvedBy: by,
  };
}

export function reject(payoutId: string): RejectPayoutCommand {
  return {
    type: 'reject-payout',
    commandId: uuid(),
    payoutId,
    merchant: MERCHANT,
    occurredAt: T0,
    rejectedBy: 'ops@example.com',
    reason: 'recipient failed screening',
  };
}

/** An operator's or producer's refresh: ask the gateway now about the operation in flight. */
export function refreshPayout(payoutId: string, endpointId = ENDPOINT): RefreshPayoutStatusCommand {
  return {
    type: 'refresh-payout-status',
    commandId: uuid(),
    payoutId,
    merchant: { endpointId },
    occurredAt: T0,
  };
}

/** A one-step payout (v2 `payout` or v4 `payout-v4`) to the placeholder sealed card. */
export function oneStepPayout(
  payoutId: string,
  minor = 5_000,
  type: 'payout' | 'payout-v4' = 'payout',
): OneStepPayoutCommand | PayoutV4Command {
  return { ...payoutCheck(payoutId, minor), type };
}

/** A payout through the hosted form (no card: the payee enters it on the form). */
export function payoutForm(payoutId: string, minor = 5_000): PayoutFormCommand {
  return {
    type: 'payout-form',
    commandId: uuid(),
    payoutId,
    merchant: MERCHANT,
    occurredAt: T0,
    amount: { minor, currency: 'EUR' },
    redirectUrl: 'https://shop.example/payout/done',
  };
}

export const command = (
  c:
    | PayoutCheckCommand
    | OneStepPayoutCommand
    | PayoutV4Command
    | PayoutFormCommand
    | ApprovePayoutCommand
    | RejectPayoutCommand
    | RefreshPayoutStatusCommand,
) => ({ kind: 'command', command: c }) as const satisfies PayoutInput;

/** The gateway's serial number of a request, as its reply and status replies about it name it. */
export const serialOf = (requestId: string): string => `sn-${requestId}`;

/** The send result of the operation in flight (an accepted one names the request's serial). */
export function sendResult(
  state: PayoutState,
  result: GatewayClassification,
  answeredAt = T0,
): PayoutInput {
  const op = state.status === 'initial' ? undefined : state.inFlight;
  const requestId = op?.requestId ?? uuid();
  const r: GatewayResult = {
    requestId,
    paymentId: state.status === 'initial' ? uuid() : state.payoutId,
    operation: op?.operation ?? 'payout-check',
    attempt: 1,
    result:
      result.kind === 'accepted' && !('serialNumber' in result)
        ? { ...result, serialNumber: serialOf(requestId) }
        : result,
    completedAt: answeredAt,
  };
  return { kind: 'gateway-result', result: r };
}

/**
 * A status reply to a query about the operation in flight; `about` as the edge would normalise
 * it. Unless `report` says otherwise it describes that very request (`requestSerial`).
 */
export function statusReply(
  state: PayoutState,
  report: GatewayStatusReport,
  about: readonly PayoutOperation[],
  answeredAt = T0,
): PayoutInput {
  const op = state.status === 'initial' ? undefined : state.inFlight;
  const described =
    'requestSerial' in report || op === undefined
      ? report
      : { ...report, requestSerial: op.serial ?? serialOf(op.requestId) };
  return {
    kind: 'gateway-result',
    result: {
      requestId: uuid(),
      paymentId: state.status === 'initial' ? uuid() : state.payoutId,
      operation: 'status',
      subjectRequestId: op?.requestId ?? uuid(),
      attempt: 1,
      result: { kind: 'accepted', report: described },
      completedAt: answeredAt,
    },
    about,
  };
}

export const timer = (t: PayoutTimer): PayoutInput => ({ kind: 'timer-fired', timer: t });

/**
 * The daily budget sagas as the runtime runs them: a money-out saga's budget request decided on
 * the budget of (endpoint, currency, day), its events kept, its answers handed back (payouts and
 * transfers share these budgets).
 */
export class BudgetBook {
  readonly budgets = new Map<string, PayoutBudgetEvent[]>();

  constructor(
    readonly ids: { next(): string },
    readonly policy: PayoutPolicy = POLICY,
  ) {}

  budget(budgetId: string): BudgetState {
    return (this.budgets.get(budgetId) ?? []).reduce(evolveBudget, initialBudgetState);
  }

  budgetOfDay(day = T0.slice(0, 10), currency = 'EUR'): BudgetState {
    return this.budget(payoutBudgetId(ENDPOINT, currency, day));
  }

  /** Reserved on the day's budget, minor units (0 when nothing was ever reserved). */
  reservedOn(day = T0.slice(0, 10), currency = 'EUR'): number {
    const budget = this.budgetOfDay(day, currency);
    return budget.status === 'open' ? budget.reservedMinor : 0;
  }

  /** Carries out a reserve or release; the budget's answers, to hand to the asking saga. */
  carryOut(effect: BudgetRequest, now: string): PayoutBudgetAnswerCommand[] {
    const currency = effect.type === 'reserve-budget' ? effect.amount.currency : effect.currency;
    const budgetId = payoutBudgetId(effect.merchant.endpointId, currency, effect.day);
    const state = this.budget(budgetId);
    const ctx = { now, ids: this.ids, policy: this.policy };
    const decision =
      effect.type === 'reserve-budget'
        ? decideBudget(
            {
              type: 'reserve-payout-budget',
              commandId: this.ids.next(),
              budgetId,
              merchant: effect.merchant,
              occurredAt: now,
              payoutId: effect.payoutId,
              amount: effect.amount,
              day: effect.day,
            },
            state,
            ctx,
          )
        : decideBudget(
            {
              type: 'release-payout-budget',
              commandId: this.ids.next(),
              budgetId,
              merchant: effect.merchant,
              occurredAt: now,
              payoutId: effect.payoutId,
            },
            state,
            ctx,
          );
    this.budgets.set(budgetId, [...(this.budgets.get(budgetId) ?? []), ...decision.events]);
    return decision.effects.map((answer) => answer.command);
  }
}

/** One payout's history and the shared budget (several payouts may share one budget). */
export class PayoutWorld {
  readonly ids = idSequence(5000);
  readonly payouts = new Map<string, PayoutEvent[]>();
  readonly book: BudgetBook;
  /** Every gateway request sent (published), in order. */
  readonly sent: Array<{ payoutId: string; operation: string; requestId: string }> = [];

  constructor(
    readonly policy: PayoutPolicy = POLICY,
    book?: BudgetBook,
  ) {
    this.book = book ?? new BudgetBook(this.ids, policy);
  }

  get budgets(): Map<string, PayoutBudgetEvent[]> {
    return this.book.budgets;
  }

  state(payoutId: string): PayoutState {
    return foldPayout(initialPayoutState, this.payouts.get(payoutId) ?? []);
  }

  budget(budgetId: string): BudgetState {
    return this.book.budget(budgetId);
  }

  budgetOfDay(day = T0.slice(0, 10), currency = 'EUR'): BudgetState {
    return this.book.budgetOfDay(day, currency);
  }

  /** Decides an input for a payout, applies its events and carries out its budget effects. */
  apply(payoutId: string, input: PayoutInput | ((s: PayoutState) => PayoutInput), now = T0) {
    const before = this.state(payoutId);
    const resolved = typeof input === 'function' ? input(before) : input;
    const decision = decidePayout(resolved, before, { now, ids: this.ids, policy: this.policy });
    this.record(payoutId, decision);
    for (const effect of decision.effects) this.carryOut(payoutId, effect, now);
    return decision;
  }

  private record(payoutId: string, decision: PayoutDecision): void {
    if (decision.outcome === 'rejected') return;
    this.payouts.set(payoutId, [...(this.payouts.get(payoutId) ?? []), ...decision.events]);
  }

  private readonly effects = moneyOutEffects<PayoutInput>(
    () => this.book,
    (answer) => ({ kind: 'command', command: answer }),
  );

  private carryOut(payoutId: string, effect: PayoutEffect, now: string): void {
    this.effects(effect, payoutId, {
      now,
      publish: (id, operation, requestId) => this.sent.push({ payoutId: id, operation, requestId }),
      apply: (input, id) => this.apply(id, input, now),
    });
  }

  /** A payout checked and registered by the gateway (approved payout-check). */
  registered(payoutId: string, minor = 5_000, now = T0): this {
    this.apply(payoutId, command({ ...payoutCheck(payoutId, minor), occurredAt: now }), now);
    this.apply(
      payoutId,
      (s) => sendResult(s, { kind: 'accepted', gatewayOrderId: `G-${payoutId.slice(-4)}` }),
      now,
    );
    this.apply(
      payoutId,
      (s) =>
        statusReply(s, { status: 'approved', gatewayOrderId: `G-${payoutId.slice(-4)}` }, [
          'payout-check',
        ]),
      now,
    );
    return this;
  }

  types(payoutId: string): string[] {
    return (this.payouts.get(payoutId) ?? []).map((e) => e.type);
  }

  paysSent(payoutId?: string): number {
    return this.sent.filter(
      (s) => s.operation === 'payout-pay' && (payoutId === undefined || s.payoutId === payoutId),
    ).length;
  }
}

/** What carrying out an effect may do to the world: publish a request, decide an answer. */
export interface EffectSink<Input> {
  readonly now: string;
  publish(sagaId: string, operation: string, requestId: string): void;
  apply(input: Input, sagaId: string): unknown;
}

// ---- money out: held requests and the daily budget, for payouts and transfers ----------

type MoneyOutEffect =
  | { type: 'resend-gateway-request' | 'schedule-timer' | 'cancel-timer' }
  | { type: 'send-gateway-request'; request: { operation: string; requestId: string }; held?: true }
  | PublishHeldRequest
  | BudgetRequest;

/**
 * Carries out a money-out saga's effects on `book`: requests written held wait for the budget's
 * grant, the budget's answers are decided by the asking saga (`answer` makes its input).
 */
export function moneyOutEffects<Input>(
  book: () => BudgetBook,
  answer: (command: PayoutBudgetAnswerCommand) => Input,
): (effect: MoneyOutEffect, sagaId: string, world: EffectSink<Input>) => void {
  const held = new Map<string, { sagaId: string; operation: string }>();
  return (effect, sagaId, world) => {
    switch (effect.type) {
      case 'send-gateway-request': {
        const { operation, requestId } = effect.request;
        if (operation === 'status') return;
        if ('held' in effect && effect.held === true) held.set(requestId, { sagaId, operation });
        else world.publish(sagaId, operation, requestId);
        return;
      }
      case 'publish-held-request': {
        const request = held.get(effect.requestId);
        if (request === undefined) throw new Error(`no held request ${effect.requestId}`);
        held.delete(effect.requestId);
        world.publish(request.sagaId, request.operation, effect.requestId);
        return;
      }
      case 'reserve-budget':
      case 'release-budget':
        for (const a of book().carryOut(effect, world.now)) world.apply(answer(a), a.payoutId);
        return;
      case 'resend-gateway-request':
      case 'schedule-timer':
      case 'cancel-timer':
        return;
      default: {
        const never: never = effect;
        throw new Error(`unhandled effect ${JSON.stringify(never)}`);
      }
    }
  };
}
