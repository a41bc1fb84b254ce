import { ManualClock } from '@payments/core';
import { Semaphore } from '../../apps/gateway-adapter/src/domain/semaphore';
import {
  DEFAULT_BACKGROUND_SHARE,
  DEFAULT_BACKGROUND_SHARE_IDLE_MS,
  DEFAULT_STATUS_WAIT_MS,
  defaultUrgentReserve,
  StatusBudget,
  type StatusAnswer,
} from '../../apps/gateway-adapter/src/domain/status-budget';
import { TokenBucket } from '../../apps/gateway-adapter/src/domain/token-bucket';
import {
  classPollDelay,
  heldPollDelay,
  MINUTE,
  nextPollDelay,
  type PollFacts,
  pollPriority,
  type StatusPriority,
} from '../../apps/orchestrator/src/domain/gateway-operation/polling';

/**
 * The one status-query scheduler as a whole, in simulated time (issue #38 item 1): the
 * orchestrator's poll cadence and classes (apps/orchestrator/src/domain/gateway-operation/polling.ts) asking one
 * endpoint's status budget (apps/gateway-adapter/src/domain/status-budget.ts), the real code of
 * both on a manual clock. Each operation is polled at its class's cadence; a query the budget
 * holds back is asked again at `retryAt` plus a jitter (an urgent one at most URGENT_HELD_MAX_MS
 * later), as gateway-operation.ts does; polls due
 * in one timer batch fire together in the same order every time (SimSettings.batchMs). Used by the property tests beside it and for figures (the issue's
 * 200 left processing / 20 lost replies) without a stack.
 *
 * Simplifications, each on the safe side of what the tests claim: a query admitted is answered at
 * once (its concurrency slot freed), no money operation takes the endpoint's tokens, and a fresh
 * unknown is settled by the first query admitted about it (its answer is the truth).
 */
export type SimKind =
  /** Answered unknown at `startsAtMs` (a lost reply): money may have moved. */
  | 'fresh-unknown'
  /** Unknown for ten minutes already, not yet alerted. */
  | 'old-unknown'
  /** Alerted: a person looks at it; polls only catch a late answer. */
  | 'alerted'
  /** Waiting for the payer (a 3-D Secure challenge, a hosted form). */
  | 'payer'
  /** Left processing by the gateway for two minutes already. */
  | 'stuck-processing'
  /** Sent at `startsAtMs`, processing. */
  | 'fresh-processing';

export interface SimOperation {
  readonly id: string;
  readonly kind: SimKind;
  /** When it enters (fresh kinds); the others are there from 0, their first poll spread by it. */
  readonly startsAtMs: number;
  /**
   * A fresh sale whose truth the gateway has this long after `startsAtMs` (its callback came):
   * the first query admitted from then settles it (SimReport.truthAfterMs). Undefined: never.
   */
  readonly settlesAfterMs?: number;
}

export interface SimSettings {
  readonly statusRatePerSecond: number;
  readonly statusBurst: number;
  readonly durationMs: number;
  readonly minIntervalMs?: number;
  /**
   * The timer worker's granularity: polls due within one batch of this many ms fire together at
   * its end, in the same order every time (by due time, then by operation), as a timer worker
   * that wakes once a second, or a clock moved forward at once, brings them (undefined: 1 ms).
   */
  readonly batchMs?: number;
  /** The adapter's claim window of a held payment's turn (StatusBudgetOptions.turnClaimMs). */
  readonly turnClaimMs?: number;
  /** The adapter's waiting room (StatusBudgetOptions.waitMs; undefined: its default, 0: none). */
  readonly waitMs?: number;
}

export interface SimSend {
  readonly atMs: number;
  readonly id: string;
  readonly priority: StatusPriority;
  /**
   * A query of another class than background had asked within the budget's idle window before
   * this one (DEFAULT_BACKGROUND_SHARE_IDLE_MS): the background share binds.
   */
  readonly othersAsking: boolean;
}

export interface SimReport {
  readonly sends: readonly SimSend[];
  /** Per operation, the time from its entry to its first admitted query (undefined: never). */
  readonly firstAskedAfterMs: ReadonlyMap<string, number | undefined>;
  /**
   * Per operation, the longest time it went without an admitted query: from its entry, between
   * two admissions, and from the last one to the end of the run (an operation settled by its
   * first answer counts only up to it).
   */
  readonly longestWaitMs: ReadonlyMap<string, number>;
  /** Queries the budget held back, per class. */
  readonly held: Readonly<Record<StatusPriority, number>>;
  /**
   * Per admitted query, by its class: the time from the poll's first ask (its cadence's due time)
   * to its admission — the holds between them included.
   */
  readonly waitsMs: Readonly<Record<StatusPriority, readonly number[]>>;
  /** Per operation with a truth (`settlesAfterMs`, or a fresh unknown's loss): time to it. */
  readonly truthAfterMs: ReadonlyMap<string, number>;
  /**
   * Status tokens lost while some query was held (its operation between a hold and its next ask):
   * the status bucket full and overflowing while truth waited — the budget idle (issue #38).
   */
  readonly tokensLostWhileHeld: number;
  /**
   * Of those, the tokens lost while a query the background share does not bind was held (an
   * urgent, routine or payer one, or a background one while no other class asked): the waste
   * the budget's rules do not mean (issue #38).
   */
  readonly tokensLostWhileUnboundHeld: number;
  /** How long some query was held, in all (ms), and the queries admitted meanwhile. */
  readonly heldMs: number;
  readonly admittedWhileHeld: number;
}

const T0 = 1_700_000_000_000;

function facts(op: SimOperation): PollFacts {
  const at = T0 + op.startsAtMs;
  switch (op.kind) {
    case 'fresh-unknown':
      return { requestedAtMs: at - 1_000, stage: 'outcome-unknown', unknownSinceMs: at };
    case 'old-unknown':
      return {
        requestedAtMs: T0 - 10 * MINUTE,
        stage: 'outcome-unknown',
        unknownSinceMs: T0 - 10 * MINUTE,
      };
    case 'alerted':
      return {
        requestedAtMs: T0 - 10 * MINUTE,
        stage: 'outcome-unknown',
        unknownSinceMs: T0 - 10 * MINUTE,
        alerted: true,
      };
    case 'payer':
      return { requestedAtMs: T0 - MINUTE, stage: 'action-required' };
    case 'stuck-processing':
      return { requestedAtMs: T0 - 2 * MINUTE, stage: 'processing' };
    case 'fresh-processing':
      return { requestedAtMs: at, stage: 'processing' };
    default:
      throw new Error('unknown kind');
  }
}

/** When an operation is first polled: a fresh one after the first poll delay, others spread. */
function firstPollAt(op: SimOperation): number {
  const fresh = op.kind === 'fresh-unknown' || op.kind === 'fresh-processing';
  return op.startsAtMs + (fresh ? nextPollDelay(0, 0) : 0);
}

export function simulate(operations: readonly SimOperation[], settings: SimSettings): SimReport {
  const clock = new ManualClock(T0);
  /** The adapter's one timer (its waiting room's): when, in run time, and what. */
  let wake: { atMs: number; fn: () => void } | undefined;
  const budget = new StatusBudget(
    {
      ratePerSecond: settings.statusRatePerSecond,
      burst: settings.statusBurst,
      moneyReservedTokens: 0,
      minIntervalMs: settings.minIntervalMs ?? 1_000,
      slotWaitMs: 2_000,
      urgentReservedTokens: defaultUrgentReserve(settings.statusBurst),
      backgroundShare: DEFAULT_BACKGROUND_SHARE,
      ...(settings.turnClaimMs === undefined ? {} : { turnClaimMs: settings.turnClaimMs }),
      waitMs: settings.waitMs ?? DEFAULT_STATUS_WAIT_MS,
    },
    new TokenBucket({ ratePerSecond: 1_000_000, burst: 1_000_000 }, clock),
    new Semaphore(1_000_000),
    clock,
    (fn, delayMs) => {
      const timer = { atMs: clock.now() - T0 + delayMs, fn };
      wake = timer;
      return () => {
        if (wake === timer) wake = undefined;
      };
    },
  );
  const batch = Math.max(1, settings.batchMs ?? 1);
  const due = (atMs: number) => Math.ceil(atMs / batch) * batch;
  const live = operations.map((op, order) => ({
    op,
    order,
    facts: facts(op),
    nextAt: due(firstPollAt(op)),
    attempt: 1,
    lastAdmittedAt: op.startsAtMs,
    /** When its truth came (its callback): the poll is brought forward and urgent from then. */
    hintAt: op.settlesAfterMs === undefined ? Infinity : due(op.startsAtMs + op.settlesAfterMs),
    hinted: false,
    /** Its last ask was held: it is between a hold and its next ask. */
    held: false,
    /** The first ask of the poll now being made (its cadence's due time), until admitted. */
    askingSince: undefined as number | undefined,
    /** Waiting in the adapter's room: asked again only after its answer. */
    inRoom: false,
    /** The class it was held in. */
    heldAs: 'routine',
  }));
  const nextOf = (entry: (typeof live)[number]) =>
    entry.inRoom ? Infinity : entry.hinted ? entry.nextAt : Math.min(entry.nextAt, entry.hintAt);
  const sends: SimSend[] = [];
  const first = new Map<string, number | undefined>(operations.map((op) => [op.id, undefined]));
  const longest = new Map<string, number>(operations.map((op) => [op.id, 0]));
  const truth = new Map<string, number>();
  const waitsMs: Record<StatusPriority, number[]> = {
    urgent: [],
    routine: [],
    payer: [],
    background: [],
  };
  const waited = (entry: (typeof live)[number], untilMs: number) =>
    longest.set(
      entry.op.id,
      Math.max(longest.get(entry.op.id) ?? 0, untilMs - entry.lastAdmittedAt),
    );
  const held: Record<StatusPriority, number> = { urgent: 0, routine: 0, payer: 0, background: 0 };
  // A shadow of the status bucket, from the sends: what it loses while some query is held.
  const rate = settings.statusRatePerSecond;
  let level = settings.statusBurst;
  let previousAt = 0;
  let lostWhileHeld = 0;
  let lostWhileUnboundHeld = 0;
  let otherAskedAt = Number.NEGATIVE_INFINITY;
  let heldMs = 0;
  let admittedWhileHeld = 0;
  const advance = (untilMs: number) => {
    const someHeld = live.some((entry) => entry.held);
    const shareBinds = previousAt - otherAskedAt < DEFAULT_BACKGROUND_SHARE_IDLE_MS;
    const unboundHeld = live.some(
      (entry) => entry.held && (entry.heldAs !== 'background' || !shareBinds),
    );
    const filled = level + ((untilMs - previousAt) * rate) / 1000;
    if (unboundHeld) lostWhileUnboundHeld += Math.max(0, filled - settings.statusBurst);
    if (someHeld) {
      lostWhileHeld += Math.max(0, filled - settings.statusBurst);
      heldMs += untilMs - previousAt;
    }
    level = Math.min(settings.statusBurst, filled);
    previousAt = untilMs;
  };
  type Live = (typeof live)[number];
  const answered = (entry: Live, at: number, priority: StatusPriority, answer: StatusAnswer) => {
    const nowMs = T0 + at;
    entry.inRoom = false;
    if (answer.kind === 'send') {
      answer.done();
      entry.held = false;
      if (live.some((other) => other.held)) admittedWhileHeld += 1;
      level -= 1;
      sends.push({
        atMs: at,
        id: entry.op.id,
        priority,
        othersAsking: at - otherAskedAt < DEFAULT_BACKGROUND_SHARE_IDLE_MS,
      });
      waitsMs[priority].push(at - (entry.askingSince ?? at));
      entry.askingSince = undefined;
      waited(entry, at);
      entry.lastAdmittedAt = at;
      if (first.get(entry.op.id) === undefined) first.set(entry.op.id, at - entry.op.startsAtMs);
      if (entry.op.kind === 'fresh-unknown' || entry.hinted) {
        truth.set(entry.op.id, at - (entry.hinted ? entry.hintAt : entry.op.startsAtMs));
        live.splice(live.indexOf(entry), 1);
        return;
      }
      const elapsed = nowMs - entry.facts.requestedAtMs;
      entry.nextAt = due(at + classPollDelay(priority, entry.attempt, elapsed));
    } else {
      held[priority] += 1;
      entry.held = true;
      entry.heldAs = priority;
      entry.nextAt = due(
        at +
          heldPollDelay(
            answer.retryAt,
            nowMs,
            `${entry.op.id}/${entry.attempt}`,
            priority === 'urgent',
          ),
      );
    }
    entry.attempt += 1;
  };
  for (;;) {
    // The next batch: every poll due at the earliest instant, in due order (then operation
    // order); or the adapter's timer, first when due first.
    let at = Infinity;
    for (const entry of live) at = Math.min(at, nextOf(entry));
    const timer = wake;
    if (timer !== undefined && timer.atMs <= at) {
      if (timer.atMs > settings.durationMs) break;
      advance(timer.atMs);
      clock.set(Math.max(clock.now(), T0 + timer.atMs));
      wake = undefined;
      timer.fn();
      continue;
    }
    if (at > settings.durationMs) break;
    advance(at);
    const firing = live.filter((entry) => nextOf(entry) === at).sort((a, b) => a.order - b.order);
    const nowMs = T0 + at;
    clock.set(Math.max(clock.now(), nowMs));
    for (const entry of firing) {
      if (!entry.hinted && entry.hintAt <= at) {
        entry.hinted = true;
        entry.facts = { ...entry.facts, hinted: true };
        entry.askingSince = at;
      }
      entry.askingSince ??= at;
      const priority = pollPriority(entry.facts, nowMs);
      if (priority !== 'background') otherAskedAt = at;
      const admission = budget.admit(entry.op.id, priority, (answer) =>
        answered(entry, clock.now() - T0, priority, answer),
      );
      if (admission.kind === 'wait') {
        // In the adapter's room: asked again only after its answer.
        entry.held = true;
        entry.heldAs = priority;
        entry.inRoom = true;
        continue;
      }
      answered(entry, at, priority, admission);
    }
  }
  advance(settings.durationMs);
  for (const entry of live) waited(entry, settings.durationMs);
  return {
    sends,
    firstAskedAfterMs: first,
    longestWaitMs: longest,
    held,
    waitsMs,
    truthAfterMs: truth,
    tokensLostWhileHeld: lostWhileHeld,
    tokensLostWhileUnboundHeld: lostWhileUnboundHeld,
    heldMs,
    admittedWhileHeld,
  };
}

/**
 * Whether queries at these times (ms, in order) fit a token bucket of `ratePerSecond` and
 * `burst`: in every window at most burst + rate × window (the first send that does not fit, or
 * undefined).
 */
export function firstOverBudget(
  times: readonly number[],
  ratePerSecond: number,
  burst: number,
): number | undefined {
  let level = burst;
  let previous = times[0] ?? 0;
  for (const [index, at] of times.entries()) {
    level = Math.min(burst, level + ((at - previous) * ratePerSecond) / 1000);
    previous = at;
    if (level < 1 - 1e-9) return index;
    level -= 1;
  }
  return undefined;
}

/**
 * The standalone chaos runs' population on one adapter (test/chaos.md, runs g and h of session
 * 15; issue #38): `stuck` sales the gateway leaves processing (background), and fresh sales
 * arriving `salesPerSecond` for `durationMs`, each polled routine from its first poll until its
 * callback comes 4-20 s after it was sent, which makes its poll urgent (a hint) and is settled by
 * the first query admitted from then (its time to truth).
 */
export function chaosPopulation(
  stuck: number,
  salesPerSecond: number,
  durationMs: number,
): SimOperation[] {
  const everyMs = 1_000 / salesPerSecond;
  const sales = Math.floor(durationMs / everyMs);
  return [
    ...Array.from({ length: stuck }, (_, i) => ({
      id: `stuck-${i}`,
      kind: 'stuck-processing' as const,
      startsAtMs: (i * 7_919) % 30_000,
    })),
    ...Array.from({ length: sales }, (_, i) => ({
      id: `sale-${i}`,
      kind: 'fresh-processing' as const,
      startsAtMs: Math.round(i * everyMs),
      settlesAfterMs: 4_000 + ((i * 5_003) % 16_000),
    })),
  ];
}

/** The `q` quantile of `values` (nearest rank; NaN when empty). */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? Number.NaN;
}

/** A run's figures in one line each (bench/status-scheduling.bench.ts, test/chaos.md). */
export function describeRun(report: SimReport, settings: SimSettings): string[] {
  const s = (ms: number) => (ms / 1000).toFixed(1);
  const waits = (['urgent', 'routine', 'payer', 'background'] as const)
    .filter((c) => report.waitsMs[c].length > 0)
    .map(
      (c) =>
        `${c} p50 ${s(quantile(report.waitsMs[c], 0.5))} s p99 ${s(quantile(report.waitsMs[c], 0.99))} s (n ${report.waitsMs[c].length})`,
    );
  const truth = [...report.truthAfterMs.values()];
  const seconds = settings.durationMs / 1000;
  const heldS = report.heldMs / 1000;
  return [
    `wait from first ask to admission: ${waits.join('; ')}`,
    `time to truth (callback → admitted query): p50 ${s(quantile(truth, 0.5))} s p99 ${s(quantile(truth, 0.99))} s max ${s(Math.max(...truth))} s (n ${truth.length})`,
    `admitted ${report.sends.length} (${(report.sends.length / seconds).toFixed(2)}/s of ${settings.statusRatePerSecond}/s); while some query was held (${heldS.toFixed(0)} s): ${(report.admittedWhileHeld / Math.max(heldS, 1e-9)).toFixed(2)}/s`,
    `held ${Object.values(report.held).reduce((a, b) => a + b, 0)} (${JSON.stringify(report.held)}); tokens lost while some query was held: ${report.tokensLostWhileHeld.toFixed(1)} (${((100 * report.tokensLostWhileHeld) / (settings.statusRatePerSecond * Math.max(heldS, 1e-9))).toFixed(1)}% of the budget meanwhile); while a query the background share does not bind was held: ${report.tokensLostWhileUnboundHeld.toFixed(1)}`,
  ];
}
