import fc from 'fast-check';
import { DEFAULT_BACKGROUND_SHARE } from '../../apps/gateway-adapter/src/domain/status-budget';
import {
  HELD_JITTER_MS,
  MINUTE,
  SECOND,
} from '../../apps/orchestrator/src/domain/gateway-operation/polling';
import {
  chaosPopulation,
  firstOverBudget,
  quantile,
  type SimKind,
  type SimOperation,
  simulate,
} from './status-scheduling';

/**
 * The one status-query scheduler, whole (issue #38 item 1): the orchestrator's classes and
 * cadence asking the adapter's status budget, on a simulated clock (status-scheduling.ts). Under
 * any mix of old unknowns, alerted ones, payers being waited for, operations the gateway leaves
 * processing, fresh sales and fresh unknowns (lost replies):
 *  - every fresh unknown is asked within FRESH_BOUND_MS of its reply being lost;
 *  - the queries sent never exceed the status rate and burst, nor the background share while
 *    another class asks (the share is work-conserving: alone, background takes the whole rate);
 *  - no operation is starved for good: none goes longer without an admitted query than
 *    {@link waitBound} — its class's longest cadence, plus twice the time the background share
 *    takes to serve every operation in the run once, plus the held jitter and a timer batch
 *    (the adapter's waiting room serves those present by class, then by when their payment was
 *    first held — its place in the line, apps/gateway-adapter/src/domain/status-line.ts — and
 *    tells one it cannot serve to come back half a wait before its turn; twice, because a held
 *    query comes back up to the jitter after that and may miss its token once);
 *  - tokens are not lost while a query waits (issue #38, time to truth): the status bucket
 *    overflows, while a query the background share does not bind is held, by at most
 *    {@link LOST_SLACK} of the budget over the time some query was held, plus a burst, plus one
 *    held query's way back at the whole rate (the held jitter and a timer batch: a query the room
 *    could not serve is away until its `retryAt` plus those, and the tokens of that while may
 *    find nobody else asking).
 * Polls due in one second fire together, in the same order every time (a timer worker's batch).
 */
const FRESH_BOUND_MS = 15 * SECOND;
const HORIZON_MS = 40 * MINUTE;
const BATCH_MS = SECOND;
/**
 * The share of the budget that may overflow while a query is held (see above). Measured, not
 * derived from the rule: the worst of a few hundred random mixes was 0.10 (a small bucket —
 * burst 2 at 3-6/s, reserve 1, so routine and payer need it full — while payers are away on
 * their way back and background is held to its share); the line it replaces lost up to 0.84.
 */
const LOST_SLACK = 0.15;

/**
 * The longest an operation may go without an admitted query (see above); its class's longest
 * cadence is the slow band's 10 minutes, a payer's 60 s, or `cadence` for a run that stays in
 * the fast band (30 s).
 */
function waitBound(
  kind: SimKind,
  operations: number,
  rate: number,
  cadence = kind === 'payer' ? MINUTE : 10 * MINUTE,
): number {
  const line = (2 * operations * SECOND) / (rate * DEFAULT_BACKGROUND_SHARE);
  return cadence + line + HELD_JITTER_MS + BATCH_MS;
}

const population = (kind: SimKind, count: number, spreadMs: number, seed: number): SimOperation[] =>
  Array.from({ length: count }, (_, i) => ({
    id: `${kind}-${i}`,
    kind,
    startsAtMs: ((i + 1) * 7_919 * (seed + 1)) % spreadMs,
  }));

describe('the status-query scheduler under the budget (simulated)', () => {
  it('property: fresh unknowns asked within the bound, the budget never exceeded (nor the background share while other classes ask), nobody starved', () => {
    fc.assert(
      fc.property(
        fc.record({
          rate: fc.integer({ min: 2, max: 8 }),
          burst: fc.integer({ min: 2, max: 8 }),
          seed: fc.nat(1_000),
          // Shares of the background population the budget's share serves in three minutes.
          oldUnknown: fc.double({ min: 0, max: 0.3, noNaN: true }),
          alerted: fc.double({ min: 0, max: 0.2, noNaN: true }),
          stuck: fc.double({ min: 0, max: 0.5, noNaN: true }),
          payers: fc.integer({ min: 0, max: 60 }),
          freshSales: fc.integer({ min: 0, max: 10 }),
          freshUnknowns: fc.integer({ min: 1, max: 16 }),
        }),
        (mix) => {
          const backgroundPerThreeMinutes = mix.rate * DEFAULT_BACKGROUND_SHARE * 180;
          const count = (share: number) => Math.floor(share * backgroundPerThreeMinutes);
          const operations = [
            ...population('old-unknown', count(mix.oldUnknown), 30 * SECOND, mix.seed),
            ...population('alerted', count(mix.alerted), 30 * SECOND, mix.seed),
            ...population('stuck-processing', count(mix.stuck), 30 * SECOND, mix.seed),
            ...population('payer', mix.payers, 60 * SECOND, mix.seed),
            ...population('fresh-processing', mix.freshSales, 60 * SECOND, mix.seed),
            // Lost replies arrive over the first ten minutes, at most two per second of rate.
            ...population(
              'fresh-unknown',
              Math.min(mix.freshUnknowns, 2 * mix.rate),
              10 * MINUTE,
              mix.seed,
            ),
          ];
          const report = simulate(operations, {
            statusRatePerSecond: mix.rate,
            statusBurst: mix.burst,
            durationMs: HORIZON_MS,
            batchMs: BATCH_MS,
          });
          const never = operations.filter(
            (op) => report.firstAskedAfterMs.get(op.id) === undefined,
          );
          expect(never).toEqual([]);
          const starved = operations.filter(
            (op) =>
              (report.longestWaitMs.get(op.id) ?? Infinity) >
              waitBound(op.kind, operations.length, mix.rate),
          );
          expect(starved).toEqual([]);
          const late = operations.filter(
            (op) =>
              op.kind === 'fresh-unknown' &&
              (report.firstAskedAfterMs.get(op.id) ?? Infinity) > FRESH_BOUND_MS,
          );
          expect(late).toEqual([]);
          const times = report.sends.map((s) => s.atMs);
          expect(firstOverBudget(times, mix.rate, mix.burst)).toBeUndefined();
          const wayBack = (mix.rate * (HELD_JITTER_MS + BATCH_MS)) / 1000;
          expect(report.tokensLostWhileUnboundHeld).toBeLessThanOrEqual(
            (LOST_SLACK * mix.rate * report.heldMs) / 1000 + mix.burst + wayBack,
          );
          const background = report.sends.filter(
            (s) => s.priority === 'background' && s.othersAsking,
          );
          expect(
            firstOverBudget(
              background.map((s) => s.atMs),
              mix.rate * DEFAULT_BACKGROUND_SHARE,
              1,
            ),
          ).toBeUndefined();
        },
      ),
      { numRuns: 40 },
    );
  });

  it('the issue #38 figures: 200 left processing and 20 lost replies on 2 queries per second, each lost reply asked within the bound', () => {
    const operations = [
      ...population('stuck-processing', 200, 30 * SECOND, 1),
      ...population('fresh-unknown', 20, MINUTE, 1),
    ];
    const report = simulate(operations, {
      statusRatePerSecond: 2,
      statusBurst: 4,
      durationMs: 10 * MINUTE,
    });
    const lost = operations.filter((op) => op.kind === 'fresh-unknown');
    const asked = lost.map((op) => report.firstAskedAfterMs.get(op.id) ?? Infinity);
    expect(Math.max(...asked)).toBeLessThanOrEqual(FRESH_BOUND_MS);
  });

  it('a population beyond the background share, polled in lockstep: each is still asked within the bound, in turn (the room serves the longest held first); without the room, some wait far longer', () => {
    // 60 sales left processing, sent together: after their first minute, 60 background polls
    // every 15-30 s want 2-4 queries a second, and the share serves half a query a second.
    const operations = population('fresh-processing', 60, 1, 0);
    const longest = (waitMs?: number) => {
      const report = simulate(operations, {
        statusRatePerSecond: 2,
        statusBurst: 4,
        durationMs: 5 * MINUTE,
        batchMs: BATCH_MS,
        ...(waitMs === undefined ? {} : { waitMs }),
      });
      return Math.max(...report.longestWaitMs.values());
    };
    const bound = waitBound('fresh-processing', operations.length, 2, 30 * SECOND);
    expect(longest()).toBeLessThanOrEqual(bound);
    // Without the room nobody is there when a token comes but by chance: first come (in batch
    // order), first served, and some wait far longer.
    expect(longest(0)).toBeGreaterThan(longest());
  });

  it('the chaos runs population (2/s, burst 2, urgent reserve 1; 150 left processing, a sale every 2 s, its callback 4-20 s later): the budget used while queries wait, a callback to its truth within the room wait and two tokens', () => {
    const settings = {
      statusRatePerSecond: 2,
      statusBurst: 2,
      durationMs: 10 * MINUTE,
      batchMs: 500,
    };
    const report = simulate(chaosPopulation(150, 0.5, settings.durationMs), settings);
    const heldS = report.heldMs / 1000;
    expect(report.tokensLostWhileUnboundHeld).toBeLessThanOrEqual(0.05 * 2 * heldS);
    expect(report.admittedWhileHeld / heldS).toBeGreaterThanOrEqual(0.9 * 2);
    // A callback's urgent query: the room's wait (1 s) plus a token of the status rate (0.5 s)
    // and a timer batch (0.5 s).
    expect(quantile([...report.truthAfterMs.values()], 0.99)).toBeLessThanOrEqual(2 * SECOND);
  });
});
