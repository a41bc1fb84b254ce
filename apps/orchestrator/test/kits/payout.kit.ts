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
  decidePayout,
  evolvePayout,
  initialPayoutState,
  type PayoutEffect,
  type PayoutInput,
  type PayoutPolicy,
  type PayoutState,
  type PayoutTimer,
} from '../../src/flows/payout/domain';
import {
  type BudgetRequest,
  type BudgetState,
  decideBudget,
  evolveBudget,
  initialBudgetState,
  payoutBudgetId,
  type PublishHeldRequest,
} from '../../src/flows/payout-budget/domain';
import type { PayoutContext, PayoutDecision } from '../../src/flows/payout/domain/model';
import { idSequence, T0, uuid } from './base.kit';
import {
  type EffectSink,
  type FlowContract,
  FlowWorld,
  type InputOrFn,
  withAskedAmount,
} from './flow.kit';

export { at, T0, uuid } from './base.kit';

export const ENDPOINT = '1234';
export const MERCHANT = { endpointId: ENDPOINT } as const;

export const POLICY: PayoutPolicy = {
  limits: {
    default: { maxMinor: 1_000_000, dailyLimitMinor: 100_000, approvalWindowMs: 10 * 60_000 },
  },
  maxSendAttempts: 3,
  unknownAlertAfterMs: 3_600_000,
  neverReceivedAfterMs: 60_000,
  ownLimitWaitMs: 600_000,
};

/** What every payout command of MERCHANT's starts with, at T0. */
const header = (payoutId: string) => ({
  commandId: uuid(),
  payoutId,
  merchant: MERCHANT,
  occurredAt: T0,
});

export function payoutCheck(payoutId: string, minor = 5_000): PayoutCheckCommand {
  return {
    type: 'payout-check',
    ...header(payoutId),
    amount: { minor, currency: 'EUR' },
    sealedCard: PLACEHOLDER_SEALED_CARD,
  };
}

export function approve(payoutId: string, by = 'finance@example.com'): ApprovePayoutCommand {
  return {
    type: 'approve-payout',
    ...header(payoutId),
    approvedBy: by,
  };
}

export function reject(payoutId: string): RejectPayoutCommand {
  return {
    type: 'reject-payout',
    ...header(payoutId),
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
    ...header(payoutId),
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
  const named = withAskedAmount(report, state);
  const described =
    'requestSerial' in named || op === undefined
      ? named
      : { ...named, requestSerial: op.serial ?? serialOf(op.requestId) };
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

export interface PayoutTypes {
  input: PayoutInput;
  state: PayoutState;
  event: PayoutEvent;
  effect: PayoutEffect;
  context: PayoutContext;
  policy: PayoutPolicy;
}

/** Payouts deciding on the flow kit's world, their budget effects carried out on `book`. */
export function payoutContract(book: () => BudgetBook, policy = POLICY): FlowContract<PayoutTypes> {
  return {
    decide: decidePayout,
    evolve: evolvePayout,
    initial: initialPayoutState,
    context: (now, ids, p) => ({ now, ids, policy: p }),
    policy,
    rejected: 'payout-command-rejected',
    carryOut: moneyOutEffects(book, (answer) => ({ kind: 'command', command: answer })),
  };
}

/** Payouts by id and the shared budget (several payouts may share one budget). */
export class PayoutWorld {
  readonly world: FlowWorld<PayoutTypes>;
  readonly book: BudgetBook;

  constructor(policy: PayoutPolicy = POLICY, book?: BudgetBook) {
    this.world = new FlowWorld(
      payoutContract(() => this.book, policy),
      idSequence(5000),
    );
    this.book = book ?? new BudgetBook(this.world.ids, policy);
  }

  get ids(): { next(): string } {
    return this.world.ids;
  }

  /** Every gateway request sent (published), in order. */
  get sent(): Array<{ payoutId: string; operation: string; requestId: string }> {
    return this.world.sent.map(({ sagaId, operation, requestId }) => ({
      payoutId: sagaId,
      operation,
      requestId,
    }));
  }

  get budgets(): Map<string, PayoutBudgetEvent[]> {
    return this.book.budgets;
  }

  state(payoutId: string): PayoutState {
    return this.world.state(payoutId);
  }

  budget(budgetId: string): BudgetState {
    return this.book.budget(budgetId);
  }

  budgetOfDay(day = T0.slice(0, 10), currency = 'EUR'): BudgetState {
    return this.book.budgetOfDay(day, currency);
  }

  /** Decides an input for a payout at `now`, keeps its events, carries out its budget effects. */
  apply(payoutId: string, input: InputOrFn<PayoutTypes>, now = T0): PayoutDecision {
    this.world.now = now;
    return this.world.apply(input, payoutId) as PayoutDecision;
  }

  /** Opens a payout of `minor` with the command `make` builds (a one-step payout by default). */
  payout(
    payoutId: string,
    minor: number,
    make: (payoutId: string, minor: number) => Parameters<typeof command>[0] = oneStepPayout,
    now = T0,
  ): PayoutDecision {
    return this.apply(payoutId, command(make(payoutId, minor)), now);
  }

  /** A payout checked and registered by the gateway (approved payout-check). */
  registered(payoutId: string, minor = 5_000, now = T0): this {
    const order = `G-${payoutId.slice(-4)}`;
    this.apply(payoutId, command({ ...payoutCheck(payoutId, minor), occurredAt: now }), now);
    this.apply(payoutId, (s) => sendResult(s, { kind: 'accepted', gatewayOrderId: order }), now);
    this.apply(
      payoutId,
      (s) => statusReply(s, { status: 'approved', gatewayOrderId: order }, ['payout-check']),
      now,
    );
    return this;
  }

  events(payoutId: string): PayoutEvent[] {
    return this.world.events(payoutId);
  }

  types(payoutId: string): string[] {
    return this.world.types(payoutId);
  }

  paysSent(payoutId?: string): number {
    return this.world.sent.filter(
      (s) => s.operation === 'payout-pay' && (payoutId === undefined || s.sagaId === payoutId),
    ).length;
  }
}

/** A fresh world with one payout opened by the command `open` makes for its id. */
export function opened(
  open: (
    payoutId: string,
  ) => PayoutCheckCommand | OneStepPayoutCommand | PayoutV4Command | PayoutFormCommand,
): { world: PayoutWorld; id: string } {
  const world = new PayoutWorld();
  const id = uuid();
  world.apply(id, command(open(id)));
  return { world, id };
}

/** A fresh world with one payout checked and registered by the gateway. */
export function registeredPayout(): { world: PayoutWorld; id: string } {
  const world = new PayoutWorld();
  const id = uuid();
  world.registered(id);
  return { world, id };
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
