import type { StatusPriority } from '@payments/contracts';

/**
 * Status polling backoff (facts §4): "pull the status every 3-5 seconds for the first 5 minutes,
 * then continue requests for up to an hour once in 5-10 minutes. After it is better to wait for a
 * callback" — we keep polling after the hour, slowly, because a payment must not stay unknown
 * forever just because a callback got lost.
 *
 * Pure: the spread inside each band comes from the attempt number, not from randomness, so tests
 * and replays see the same schedule while consecutive polls of many payments still spread out.
 */
export const SECOND = 1000;
export const MINUTE = 60 * SECOND;
export const HOUR = 60 * MINUTE;

export const POLL_BANDS = [
  { until: 5 * MINUTE, min: 3 * SECOND, max: 5 * SECOND, step: SECOND },
  { until: HOUR, min: 5 * MINUTE, max: 10 * MINUTE, step: MINUTE },
  { until: Number.POSITIVE_INFINITY, min: HOUR, max: HOUR, step: 0 },
] as const;

/**
 * Delay before the next status query.
 * @param attempt 0-based number of the poll being scheduled
 * @param elapsedMs time since the request was sent
 */
export function nextPollDelay(attempt: number, elapsedMs: number): number {
  const band =
    POLL_BANDS.find((b) => Math.max(0, elapsedMs) < b.until) ?? POLL_BANDS[POLL_BANDS.length - 1];
  const slots = band.step === 0 ? 1 : Math.floor((band.max - band.min) / band.step) + 1;
  const spread = band.step * (Math.abs(Math.trunc(attempt)) % slots);
  const delay = band.min + spread;
  // Do not jump over the start of the next band by more than needed: the first 5-minute poll
  // should not be delayed 10 minutes past the end of the fast phase.
  return band.until === Number.POSITIVE_INFINITY
    ? delay
    : Math.min(delay, Math.max(band.min, band.until - elapsedMs));
}

/** Delay before resending a request that was provably not sent (breaker open, rate limited). */
export function notSentRetryDelay(attempt: number): number {
  return Math.min(5 * MINUTE, 2 ** Math.max(0, attempt - 1) * SECOND);
}

/**
 * The one status-query scheduler (issue #38): who is asked, how often, and in which class of the
 * adapter's status budget (StatusPriority; the adapter's StatusBudget admits by it). By need, not
 * by arrival:
 *  - `urgent`: money may have just moved — an outcome answered unknown (the answer lost on the
 *    way: a timeout, a 5xx, a result that never came), for {@link URGENT_FOR_MS} from then (the
 *    no-trace window, the one resend and the repeat's own window fit in it); a poll a verified
 *    callback or browser return brought forward; an operator's refresh. Not an unknown the
 *    gateway itself reports about a request it acknowledged (`PollFacts.acknowledged`): the
 *    gateway does not know yet, so asking every 3-5 s reads nothing sooner — session 17's chaos
 *    run: the population's 150 such sales took 59 % of the urgent queries, and transfers waited
 *    a minute as routine, then minutes more as background.
 *  - `payer`: waiting for a person (3-D Secure, a hosted form): not in the fast band at all; asked
 *    when the payer comes back (the return or callback makes an urgent query) and otherwise every
 *    {@link PAYER_BAND} until the flow's own deadline for the payer.
 *  - `routine`: sent less than {@link ROUTINE_FOR_MS} ago, at the facts' 3-5 s.
 *  - `background`: everything older (still processing, unknown for long, alerted): asked every
 *    {@link BACKGROUND_FAST_BAND} while the facts' fast band lasts, then the facts' slow bands.
 *    The adapter gives this class a bounded share, so no population of them takes the budget
 *    from fresher ones.
 * A query the adapter held back (not-sent with `retryAt`) is asked again at `retryAt` plus a
 * jitter ({@link heldPollDelay}; an urgent one at most {@link URGENT_HELD_MAX_MS} later), whatever
 * the flow, and urgent again when it was urgent (the
 * result's `priority`: a verified callback's query held back must not fall to the class its
 * operation's age gives it, at the end of that line): the adapter's `retryAt` is the payment's turn
 * in its class's line, so those held go first in the order they were held and none is starved
 * for good; the refusal is planned with, not repeated every few seconds.
 */
export type { StatusPriority };

export const URGENT_FOR_MS = 3 * MINUTE;
/**
 * How long a hint (a verified callback, a browser return, an operator's refresh) keeps an
 * operation's polls urgent: the gateway said money moved, or a person asked, so the truth is
 * there to be read and is owed within seconds (issue #38's bound) — longer than an unknown's
 * {@link URGENT_FOR_MS}, which is a guess. Session 16's chaos run: a capture whose callback came
 * fell to the background class 3 min after it, behind the population left processing, and was
 * reported 15 min late.
 */
export const HINT_URGENT_FOR_MS = 10 * MINUTE;
export const ROUTINE_FOR_MS = MINUTE;
export const PAYER_BAND = { min: 30 * SECOND, max: 60 * SECOND, step: 10 * SECOND } as const;
export const BACKGROUND_FAST_BAND = {
  min: 15 * SECOND,
  max: 30 * SECOND,
  step: 5 * SECOND,
} as const;
/** The spread added to a held query's `retryAt`, so held polls do not return all at once. */
export const HELD_JITTER_MS = 2 * SECOND;
/**
 * The longest an urgent query held back waits before it is asked again, whatever its `retryAt`
 * (plus the jitter): the fast band's longest cadence. Issue #38: a verified callback's query held
 * until a far `retryAt` (a long urgent line, an adapter limit's instant) went that long without
 * a query while money had moved.
 */
export const URGENT_HELD_MAX_MS = POLL_BANDS[0].max;

/**
 * The longest a live hint's query held back (a verified callback, a browser return, a refresh:
 * money moved, the truth is there to be read) waits before it is asked again, and the spread on
 * top ({@link HINT_HELD_JITTER_MS}): it comes back while the adapter's room still ranks it first
 * in the urgent class, rather than at {@link URGENT_HELD_MAX_MS} — session 17's run q (seed 11):
 * in the follow-ups' burst the urgent class was saturated, hinted queries held with a `retryAt`
 * ≈ 15 s ahead (the whole urgent line's turn) came back 5-7 s later, were absent from the room
 * when most tokens came, and the unknowns urgent by age took them: captures and refunds reported
 * 12-23 s after their callback (p99 11.7 s, bound 10 s). The adapter's line now tells a hinted
 * place a turn counting only the hinted places before it (StatusLine.held): this bound stays the
 * orchestrator's own, whatever an adapter (of another version, or another replica's line) says.
 */
export const HINT_HELD_MAX_MS = SECOND;
export const HINT_HELD_JITTER_MS = 500;

/** What the scheduler needs to know about an operation in flight (times in clock ms). */
export interface PollFacts {
  readonly requestedAtMs: number;
  readonly stage: 'requested' | 'processing' | 'action-required' | 'outcome-unknown';
  readonly unknownSinceMs?: number;
  /**
   * The gateway acknowledged this very request (a reply named its serial): an outcome unknown
   * since is the gateway's own report (status `unknown`, "inform your account manager"), not an
   * answer lost on the way. The truth is not there to be read sooner than for a payment the
   * gateway leaves processing, and it is polled as one (routine, then background): not urgent.
   */
  readonly acknowledged?: boolean;
  /** The alert was raised: a person looks at it; polls only catch a late answer. */
  readonly alerted?: boolean;
  /** Waiting for the payer (3-D Secure challenge, hosted form, approval). */
  readonly waitingForPayer?: boolean;
  /**
   * This poll was brought forward by a verified callback or browser return, or asks again a
   * query the adapter held back while it was urgent (operation-polls.ts `heldPoll`).
   */
  readonly hinted?: boolean;
}

/**
 * Whether a hint (a verified callback, a browser return, a refresh; a held query's echoed
 * `urgentSince`) made at `hintedAt` (ISO) still makes the operation's polls urgent at `nowMs`: for
 * {@link HINT_URGENT_FOR_MS} after it, so a hinted query the gateway refused or answered 5xx, or one held back, is asked
 * again urgent and at the fast cadence instead of dropping to the class the operation's age gives.
 */
export function hintLive(hintedAt: string | undefined, nowMs: number): boolean {
  if (hintedAt === undefined) return false;
  const at = Date.parse(hintedAt);
  return Number.isFinite(at) && nowMs - at < HINT_URGENT_FOR_MS;
}

/** The class of the poll made now about an operation with these facts. */
export function pollPriority(facts: PollFacts, nowMs: number): StatusPriority {
  if (facts.hinted === true) return 'urgent';
  if (facts.alerted === true) return 'background';
  if (
    facts.stage === 'outcome-unknown' &&
    facts.acknowledged !== true &&
    nowMs - (facts.unknownSinceMs ?? facts.requestedAtMs) < URGENT_FOR_MS
  )
    return 'urgent';
  if (facts.waitingForPayer === true || facts.stage === 'action-required') return 'payer';
  if (nowMs - facts.requestedAtMs < ROUTINE_FOR_MS) return 'routine';
  return 'background';
}

function inBand(band: { min: number; max: number; step: number }, attempt: number): number {
  const slots = Math.floor((band.max - band.min) / band.step) + 1;
  return band.min + band.step * (Math.abs(Math.trunc(attempt)) % slots);
}

/**
 * Delay before the next poll of an operation in `priority` (`attempt`: 0-based number of the poll
 * being scheduled; `elapsedMs`: since the request was sent). Urgent and routine polls follow the
 * facts' bands; a payer's every 30-60 s; background ones every 15-30 s in the fast band, then
 * the facts' slow bands.
 */
export function classPollDelay(
  priority: StatusPriority,
  attempt: number,
  elapsedMs: number,
): number {
  switch (priority) {
    case 'payer':
      return inBand(PAYER_BAND, attempt);
    case 'background':
      return elapsedMs < POLL_BANDS[0].until
        ? inBand(BACKGROUND_FAST_BAND, attempt)
        : nextPollDelay(attempt, elapsedMs);
    case 'urgent':
    case 'routine':
      return nextPollDelay(attempt, elapsedMs);
    default:
      throw new Error(`unknown status priority ${String(priority)}`);
  }
}

/**
 * Delay before asking again after the adapter held a query back until `retryAtMs`: then, plus a
 * jitter from `seed` (a crowd held together does not return together, nor in the same order every
 * round). Never the class's cadence instead: the adapter's `retryAt` of a query held for the
 * budget is half the adapter's room wait before the payment's turn in its class's line
 * (apps/gateway-adapter/src/domain/status-line.ts): there it waits for its token, ranked before
 * the payments held after it; a poll that came back a cadence later would have lost a minute.
 *
 * `urgent` (the held query was urgent: money may have just moved): at `retryAt` or after
 * {@link URGENT_HELD_MAX_MS}, whichever comes first, plus the jitter — seconds, whatever the
 * adapter said; `hinted` too (a live hint: money moved, and the room ranks it first in its
 * class): within {@link HINT_HELD_MAX_MS} plus {@link HINT_HELD_JITTER_MS}. Coming back before its
 * turn costs a wait in the adapter's room (at most 1 s) or one more hold, not the turn: the adapter's line keeps the payment's place (StatusLine.held), and an
 * urgent query needs one token, which the urgent reserve keeps from every other class.
 */
export function heldPollDelay(
  retryAtMs: number,
  nowMs: number,
  seed: string,
  urgent = false,
  /** Urgent by a live hint: at `retryAt` or {@link HINT_HELD_MAX_MS}, plus a shorter spread. */
  hinted = false,
): number {
  const wait = Math.max(retryAtMs - nowMs, 0);
  if (urgent && hinted)
    return Math.min(wait, HINT_HELD_MAX_MS) + (jitter(seed) % HINT_HELD_JITTER_MS);
  return (urgent ? Math.min(wait, URGENT_HELD_MAX_MS) : wait) + jitter(seed);
}

/** A spread in [0, HELD_JITTER_MS) from a string (FNV-1a): pure, the same for the same seed. */
export function jitter(seed: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < seed.length; i++) {
    hash ^= seed.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % HELD_JITTER_MS;
}
