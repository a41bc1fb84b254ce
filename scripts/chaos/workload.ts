/**
 * The chaos run's workload: the scenarios (one saga each, a chain of commands drawn by weight with
 * a seeded generator) and what ends them.
 */
import { COMMANDS, ENDS, GUARANTEED_FIRST, SCENARIOS, UNKNOWN } from './flows';
import type { PayerPlan, SagaEvent, Step, WorkloadCommand } from './flows/companion';
import type { PaymentStack } from '../stack/payment-stack';
import type { ChaosReport } from './chaos-config';

export { ENDS, GUARANTEED_FIRST, SCENARIOS, type PayerPlan, type Step };

/** The event that lets a scenario's next step go: the previous step succeeded. */
export const successOf = (type: string): string => {
  const rule = COMMANDS[type];
  if (rule === undefined) throw new Error(`no chaos companion sends ${type}`);
  return rule.success;
};

/** An unknown outcome raised for a person (no trace and no safe repeat): nothing more happens. */
export const ALERTED = UNKNOWN;

/** The sandbox's ACS challenge window (its challengeTimeoutMs), and a second past it. */
export const ACS_WINDOW_SECONDS = 601;

/** An open saga with no event for this long is stalled (awaits nothing the run will bring). */
export const STALLED_MS = 60_000;

/**
 * A saga whose scripted payer still waits for its page (the redirect not yet reported) is stalled
 * only after this long: moving the sandbox's clock past the ACS window would end the very challenge
 * it awaits (a stack slow to recover from a broker restart reports the redirect minutes late).
 */
export const AWAITING_PAYER_STALLED_MS = 5 * STALLED_MS;

export interface Scenario {
  readonly paymentId: string;
  readonly name: string;
  readonly steps: readonly Step[];
  readonly amountMinor: number;
  /** Index of the next step to send. */
  next: number;
  /** The next step may be sent (the previous one succeeded). */
  ready: boolean;
  /** Ended: every step sent and done, or a step did not succeed. */
  ended: boolean;
  /** The highest event version seen: a redelivered earlier event decides nothing again. */
  seenVersion: number;
  /** The saga the last step sent went to: the scenario's own, or a rebill's. */
  saga: string;
  /**
   * The saga ids of the steps that start a saga of their own (rebills, PAN-eligibility checks),
   * drawn with the scenario (a draw at send time would depend on timing, and the seed would no
   * longer give one workload), and how many were used.
   */
  readonly ownSagas: readonly string[];
  ownSagasUsed: number;
  /** The card reference an earlier step made (card-ref-created). */
  cardRefId?: string;
  /** The payer of the last step has been sent to its page (once per step). */
  payerStarted?: boolean;
  /** The payer left the ACS page without an answer: only the ACS window ends the sale. */
  abandoned?: boolean;
  /** When the current saga last said anything (ms): a saga silent for long is stalled. */
  lastEventAt?: number;
  /** The last step sent and the event that ended the scenario (`sale → declined: …`). */
  endedBy?: string;
}

/** The scenario's current step has a payer who will answer (not abandon) and has not started yet. */
export function awaitsPayer(s: Scenario): boolean {
  const plan = s.next > 0 ? s.steps[s.next - 1]?.payer : undefined;
  return plan !== undefined && plan !== 'abandon' && s.payerStarted !== true;
}

/**
 * May the sandbox's clock be moved past the ACS window now, to end the abandoned challenges? Only
 * when no payer is at a page, some open scenario abandoned, and every other open one is stalled
 * (silent for {@link STALLED_MS}; {@link AWAITING_PAYER_STALLED_MS} while its payer waits for the
 * redirect): moving the clock then cannot change what they await.
 */
export function mayEndAcsWindows(
  open: readonly Scenario[],
  payersActing: number,
  now: number,
): boolean {
  const stalled = (s: Scenario) =>
    now - (s.lastEventAt ?? 0) > (awaitsPayer(s) ? AWAITING_PAYER_STALLED_MS : STALLED_MS);
  return (
    payersActing === 0 &&
    open.some((s) => s.abandoned === true) &&
    open.every((s) => s.abandoned === true || stalled(s))
  );
}

/** An ending event as the report names it: a decline with the gateway's message. */
export function endOf(event: SagaEvent): string {
  return event.type === 'declined' && event.message ? `declined: ${event.message}` : event.type;
}

/**
 * A UUID v4 drawn from the seeded generator: payment ids are the sandbox's client_orderid, which
 * keys its fault draws, so the same seed hits the same payments with the same faults.
 */
export function seededUuid(random: () => number): string {
  const bytes = Array.from({ length: 16 }, () => Math.floor(random() * 256));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** mulberry32: a small seeded generator, so one seed gives one workload. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A command a scenario's step sends, and the saga it is about (its family's saga id field). */
export type AnyCommand = WorkloadCommand;

/** The command of a scenario's step, on the run's stack (its companion's builder). */
export function commandOf(stack: PaymentStack, s: Scenario, step: Step): AnyCommand {
  const rule = COMMANDS[step.type];
  if (rule === undefined) throw new Error(`no chaos companion sends ${step.type}`);
  return rule.build({
    stack,
    scenarioId: s.paymentId,
    saga: s.saga,
    amountMinor: s.amountMinor,
    ...(step.part ? { partMinor: Math.max(1, Math.round(s.amountMinor * step.part)) } : {}),
    step,
    ...((step.endpointId ?? s.steps[0].endpointId) === undefined
      ? {}
      : { endpointId: step.endpointId ?? s.steps[0].endpointId }),
    ...(s.cardRefId === undefined ? {} : { cardRefId: s.cardRefId }),
  });
}

export function summarize(scenarios: readonly Scenario[]): ChaosReport['scenarios'] {
  const out: ChaosReport['scenarios'] = {};
  for (const s of scenarios) {
    const row = (out[s.name] ??= { started: 0, completed: 0, endedEarly: 0, unsent: 0 });
    row.started += 1;
    const complete = s.ended && s.next === s.steps.length && !s.ready;
    if (complete) row.completed += 1;
    else row.endedEarly += 1;
    row.unsent += commandsOf(s.steps.slice(s.next));
  }
  return out;
}

/** The commands a run of steps sends: one a step, two for a step with a command alongside. */
export function commandsOf(steps: readonly Step[]): number {
  return steps.reduce((n, step) => n + (step.alongside === undefined ? 1 : 2), 0);
}

export function endsOf(scenarios: readonly Scenario[]): ChaosReport['scenarioEnds'] {
  const out: ChaosReport['scenarioEnds'] = {};
  for (const s of scenarios) {
    const ends = (out[s.name] ??= {});
    const end = s.endedBy ?? 'not ended';
    ends[end] = (ends[end] ?? 0) + 1;
  }
  return out;
}
