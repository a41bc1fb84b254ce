import { ManualClock } from '@payments/core';
import { Semaphore } from '../../apps/gateway-adapter/src/domain/semaphore';
import {
  DEFAULT_BACKGROUND_SHARE,
  DEFAULT_BACKGROUND_SHARE_IDLE_MS,
  defaultUrgentReserve,
  StatusBudget,
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
    },
    new TokenBucket({ ratePerSecond: 1_000_000, burst: 1_000_000 }, clock),
    new Semaphore(1_000_000),
    clock,
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
  }));
  const sends: SimSend[] = [];
  const first = new Map<string, number | undefined>(operations.map((op) => [op.id, undefined]));
  const longest = new Map<string, number>(operations.map((op) => [op.id, 0]));
  const waited = (entry: (typeof live)[number], untilMs: number) =>
    longest.set(
      entry.op.id,
      Math.max(longest.get(entry.op.id) ?? 0, untilMs - entry.lastAdmittedAt),
    );
  const held: Record<StatusPriority, number> = { urgent: 0, routine: 0, payer: 0, background: 0 };
  let otherAskedAt = Number.NEGATIVE_INFINITY;
  for (;;) {
    // The next batch: every poll due at the earliest instant, in due order (then operation order).
    let at = Infinity;
    for (const entry of live) at = Math.min(at, entry.nextAt);
    if (at > settings.durationMs) break;
    const firing = live.filter((entry) => entry.nextAt === at).sort((a, b) => a.order - b.order);
    const nowMs = T0 + at;
    clock.set(Math.max(clock.now(), nowMs));
    for (const entry of firing) {
      const priority = pollPriority(entry.facts, nowMs);
      const elapsed = nowMs - entry.facts.requestedAtMs;
      const cadence = classPollDelay(priority, entry.attempt, elapsed);
      if (priority !== 'background') otherAskedAt = at;
      const othersAsking = at - otherAskedAt < DEFAULT_BACKGROUND_SHARE_IDLE_MS;
      const admission = budget.admit(entry.op.id, priority);
      if (admission.kind === 'send') {
        admission.done();
        sends.push({ atMs: at, id: entry.op.id, priority, othersAsking });
        waited(entry, at);
        entry.lastAdmittedAt = at;
        if (first.get(entry.op.id) === undefined) first.set(entry.op.id, at - entry.op.startsAtMs);
        if (entry.op.kind === 'fresh-unknown') {
          live.splice(live.indexOf(entry), 1);
          continue;
        }
        entry.nextAt = due(at + cadence);
      } else {
        held[priority] += 1;
        entry.nextAt = due(
          at +
            heldPollDelay(
              admission.retryAt,
              nowMs,
              `${entry.op.id}/${entry.attempt}`,
              priority === 'urgent',
            ),
        );
      }
      entry.attempt += 1;
    }
  }
  for (const entry of live) waited(entry, settings.durationMs);
  return { sends, firstAskedAfterMs: first, longestWaitMs: longest, held };
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
