/**
 * The chaos companions, one per family of `FLOW_FAMILIES` keyed by the family's name, and the
 * workload's and checks' lists built from them. A family added to the registry without a companion
 * fails `companions.spec.ts`; a companion without a decision for one of its family's events does
 * not compile.
 */
import type { Movement } from '../../stack/sandbox-controls';
import { cardPaymentCompanion } from './card-payment';
import type {
  ChaosCompanion,
  CommandRule,
  EventRole,
  EventRule,
  MoveState,
  SagaEvent,
  ScenarioShape,
} from './companion';
import { panEligibilityCompanion } from './pan-eligibility';
import { payoutBudgetCompanion } from './payout-budget';
import { payoutCompanion } from './payout';
import { recurringScheduleCompanion } from './recurring-schedule';
import { transferCompanion } from './transfer';

export const CHAOS_COMPANIONS: Readonly<Record<string, ChaosCompanion>> = Object.fromEntries(
  [
    cardPaymentCompanion,
    payoutCompanion,
    payoutBudgetCompanion,
    transferCompanion,
    panEligibilityCompanion,
    recurringScheduleCompanion,
  ].map((c) => [c.family, c]),
);

const companions = Object.values(CHAOS_COMPANIONS);

/** The tables merged; a key two companions both define is a mistake, not an override. */
function merged<T>(
  tables: readonly Readonly<Record<string, T>>[],
  what: string,
): Record<string, T> {
  const out: Record<string, T> = {};
  for (const table of tables) {
    for (const [key, value] of Object.entries(table)) {
      if (value === undefined) continue;
      if (Object.hasOwn(out, key)) throw new Error(`two chaos companions define ${what} ${key}`);
      out[key] = value;
    }
  }
  return out;
}

/** Every scenario of the workload, drawn by weight. */
export const SCENARIOS: readonly ScenarioShape[] = companions.flatMap((c) => c.scenarios);

/** The scenarios every run starts first, one each, before the seeded draw. */
export const GUARANTEED_FIRST: readonly string[] = SCENARIOS.filter((s) => s.guaranteed).map(
  (s) => s.name,
);

/** Every command type the workload sends, and how. */
export const COMMANDS: Readonly<Record<string, CommandRule>> = merged(
  companions.map((c) => c.commands as Record<string, CommandRule>),
  'command',
);

/** Every event type of every family, and what it is to the checks. */
export const EVENT_RULES: Readonly<Record<string, EventRule<never>>> = merged(
  companions.map((c) => c.events as Record<string, EventRule<never>>),
  'event',
);

const withRole = (role: EventRole) =>
  new Set(
    Object.entries(EVENT_RULES)
      .filter(([, r]) => r.role === role)
      .map(([type]) => type),
  );

/** Events that issue a gateway request (or a card-reference request: its saga is unsettled). */
export const REQUESTED = withRole('requested');
/** Events that settle one gateway request (the request's final answer). */
export const FINAL_OF_OPERATION = withRole('final');
/** An operation's outcome unknown (with `alert`: raised for a person). */
export const UNKNOWN = withRole('unknown');
export const RESENT = withRole('resent');
/** A request refused before it was sent (the daily budget): settled, nothing moved. */
export const REFUSED_BEFORE_SENDING = withRole('refused-before-sending');
/** A command refused (a valid workload should get none). */
export const REJECTED = withRole('rejected');
/** Events after which a scenario sends nothing more. */
export const ENDS = new Set(
  Object.entries(EVENT_RULES)
    .filter(([, r]) => r.endsScenario)
    .map(([type]) => type),
);

/** Ledger movements taken once per intended operation, and the commands that intend one each. */
export const ONCE_PER_OPERATION: Readonly<Partial<Record<Movement, readonly string[]>>> = (() => {
  const out: Partial<Record<Movement, string[]>> = {};
  for (const [type, rule] of Object.entries(COMMANDS))
    if (rule.once !== undefined) (out[rule.once] ??= []).push(type);
  return out;
})();

/** Money out of the merchant's account: what the daily payout limit bounds. */
export const MONEY_OUT: readonly Movement[] = companions.flatMap((c) => c.moneyOut ?? []);

/** What an operation left in flight may have moved, by its operation (or requested event type). */
export const MAY_MOVE: Readonly<Record<string, readonly Movement[]>> = merged(
  companions.map((c) => c.mayMove),
  'operation',
);

/** A saga past `after` is not final before one of `endedBy`. */
export const AWAITS = companions.flatMap((c) => (c.awaits === undefined ? [] : [c.awaits]));

/** What the gateway's ledger must hold if every event told the truth, sorted. */
export function expectedMovements(events: readonly SagaEvent[]): string[] {
  const state: MoveState = { holdOpen: false };
  const out: string[] = [];
  for (const e of [...events].sort((a, b) => a.version - b.version)) {
    const rule = EVENT_RULES[e.type] as EventRule<SagaEvent> | undefined;
    if (rule === undefined) throw new Error(`no chaos companion knows the event ${e.type}`);
    out.push(...(rule.moves?.(e, state) ?? []));
  }
  return out.sort();
}

export type { ScenarioShape, Step, PayerPlan, StepContext, SagaEvent } from './companion';
