/**
 * Time to truth (issue #38 item 3), pure: for every money movement in the sandbox's ledger, the
 * time from the gateway making it to the first event that reports it, split by whether a
 * callback about the order reached the service (then p99 ≤ `callbackP99Ms`) or every one was
 * lost (then each ≤ the no-trace window + `lostSlackSeconds`); and the status queries the gateway
 * saw per endpoint and second against its budget.
 */
import type { LedgerEntry } from '../stack/sandbox-controls';
import { EVENT_RULES } from './flows';
import type { EventRule, MoveState, SagaEvent } from './flows/companion';
import type { Problem } from './checks';

/** An event as read from the topic, with the broker's create time (epoch ms). */
export interface TimedEvent {
  readonly event: SagaEvent;
  readonly ceId: string;
  readonly at: number;
}

/** The sandbox's clock moved forward by `seconds` at wall time `wallAt` (epoch ms). */
export interface ClockAdvance {
  readonly wallAt: number;
  readonly seconds: number;
}

export interface TruthBounds {
  /** p99 of movements whose order's callback reached the service (issue #38: 10 s). */
  readonly callbackP99Ms: number;
  /** Every movement whose callbacks were all lost: within the no-trace window + this. */
  readonly lostBoundMs: number;
}

export interface TruthFigures {
  readonly count: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
}

/**
 * A window in which the run disrupted the service's own infrastructure (the broker restarted, the
 * adapter's database out): every app waits, so a movement the gateway made inside it (or within
 * its bound before it — `DISRUPTION_LEAD_MS` with a callback, the lost-callback bound without —,
 * or `DISRUPTION_GRACE_MS` after it while the backlog drains) is timed apart, its figures printed
 * but not held to the bounds, which judge the service at work under gateway faults and kills of
 * single replicas.
 */
export interface Disruption {
  readonly from: number;
  readonly to: number;
}

/** After a disruption ends, how long its backlog may take before movements count again. */
export const DISRUPTION_GRACE_MS = 30_000;

/**
 * Before a disruption starts, a movement whose callback arrived still within the callback bound of
 * it: its truth was due while everything waited. A movement whose every callback was lost is due
 * within the lost-callback bound (`TruthBounds.lostBoundMs`), so that is its lead (session 18's
 * run b: a transfer made 11.2 s before a PostgreSQL failover, its truth due within 45 s, was
 * judged, and reported 215 s late after the failover and two kills).
 */
export const DISRUPTION_LEAD_MS = 10_000;

export interface TimeToTruth {
  /** Per family (the saga's events' family is the first event's), callback arrived / lost. */
  readonly byFamily: Record<string, { arrived?: TruthFigures; lost?: TruthFigures }>;
  /** Movements made during a disruption (or its grace), all families: not held to the bounds. */
  readonly disrupted?: TruthFigures;
  /** Movements held to the bounds (made outside every disruption window), all families. */
  readonly judged: number;
  /** Of them, those whose callback arrived (held to the p99 bound). */
  readonly judgedWithCallback: number;
  /** Movements reported later than their bound, and a family's p99 over it. */
  readonly problems: Problem[];
  /** The five movements reported last (saga, movement, seconds). */
  readonly slowest: Problem[];
  /** The five reported last among those made during a disruption (not held to the bounds). */
  readonly slowestDisrupted?: Problem[];
}

function figures(latencies: readonly number[]): TruthFigures | undefined {
  if (latencies.length === 0) return undefined;
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
  return { count: sorted.length, p50Ms: at(0.5), p99Ms: at(0.99), maxMs: sorted.at(-1) ?? 0 };
}

/** The wall time of a ledger time on the sandbox's clock, moved forward by `advances`. */
export function wallTimeOf(sandboxAt: number, advances: readonly ClockAdvance[]): number {
  let offset = 0;
  let wall = sandboxAt;
  for (const a of [...advances].sort((x, y) => x.wallAt - y.wallAt)) {
    const after = offset + a.seconds * 1000;
    if (sandboxAt >= a.wallAt + after) wall = sandboxAt - after;
    offset = after;
  }
  return offset === 0 ? sandboxAt : wall;
}

/** Which family a saga's events belong to (by the type of its first event). */
function familyOf(
  events: readonly SagaEvent[],
  families: Readonly<Record<string, string>>,
): string {
  return families[events[0]?.type ?? ''] ?? 'unknown';
}

export function timeToTruth(input: {
  readonly ledger: readonly LedgerEntry[];
  /** Events of the sagas to judge, by saga id. */
  readonly events: ReadonlyMap<string, readonly TimedEvent[]>;
  /**
   * Per saga, when its callbacks were delivered (not dropped, answered 2xx; wall clock, as the
   * sandbox's callback log has it): a movement's callback arrived if one was delivered at or
   * after it.
   */
  readonly callbacksDelivered: ReadonlyMap<string, readonly number[]>;
  readonly advances: readonly ClockAdvance[];
  readonly bounds: TruthBounds;
  /** The run's infrastructure disruptions (wall clock); none: every movement is judged. */
  readonly disruptions?: readonly Disruption[];
  /** Event type → its family name. */
  readonly families: Readonly<Record<string, string>>;
}): TimeToTruth {
  const samples = new Map<string, { arrived: number[]; lost: number[] }>();
  const problems: Problem[] = [];
  const slowest: (Problem & { latency: number })[] = [];
  const disrupted: number[] = [];
  const slowestDisrupted: (Problem & { latency: number })[] = [];
  const inDisruption = (at: number, leadMs: number) =>
    (input.disruptions ?? []).some(
      (d) => at >= d.from - leadMs && at <= d.to + DISRUPTION_GRACE_MS,
    );
  const bySaga = new Map<string, LedgerEntry[]>();
  for (const l of input.ledger) {
    if (!input.events.has(l.clientOrderId)) continue;
    bySaga.set(l.clientOrderId, [...(bySaga.get(l.clientOrderId) ?? []), l]);
  }
  for (const [saga, entries] of bySaga) {
    const seen = new Set<string>();
    const timed = (input.events.get(saga) ?? []).filter(
      (t) => !seen.has(t.ceId) && seen.add(t.ceId),
    );
    const sorted = [...timed].sort((a, b) => a.event.version - b.event.version);
    // Each event's movements, in version order (a void releases a hold only after `authorized`).
    const state: MoveState = { holdOpen: false };
    const reports = sorted.flatMap((t) => {
      const rule = EVENT_RULES[t.event.type] as EventRule<SagaEvent> | undefined;
      return (rule?.moves?.(t.event, state) ?? []).map((m) => ({ movement: m, at: t.at }));
    });
    const family = familyOf(
      sorted.map((t) => t.event),
      input.families,
    );
    const row = samples.get(family) ?? { arrived: [], lost: [] };
    samples.set(family, row);
    const delivered = input.callbacksDelivered.get(saga) ?? [];
    for (const entry of [...entries].sort((a, b) => a.seq - b.seq)) {
      const movedAt = wallTimeOf(entry.at, input.advances);
      const arrived = delivered.some((at) => at >= movedAt);
      const movement = `${entry.movement} ${entry.amountMinor}`;
      const i = reports.findIndex((r) => r.movement === movement);
      if (i < 0) continue; // never reported: the misreported / contradicted lines say so
      const [report] = reports.splice(i, 1);
      const latency = Math.max(0, report.at - movedAt);
      const disruptedAt = inDisruption(
        movedAt,
        arrived ? DISRUPTION_LEAD_MS : Math.max(DISRUPTION_LEAD_MS, input.bounds.lostBoundMs),
      );
      // A disruption that began while the movement waited for its report (judged movements only:
      // one made within the lead is excluded): its truth may have been held by it.
      const began = (input.disruptions ?? [])
        .map((d) => d.from - movedAt)
        .filter((after) => after > 0 && after < latency)
        .sort((a, b) => a - b)[0];
      const timed = {
        paymentId: saga,
        detail: `${movement} ${(latency / 1000).toFixed(1)} s${arrived ? '' : ', callbacks lost'}${
          began === undefined || disruptedAt
            ? ''
            : `, a disruption began ${(began / 1000).toFixed(1)} s after it`
        }`,
        latency,
      };
      if (disruptedAt) {
        disrupted.push(latency);
        slowestDisrupted.push(timed);
        continue;
      }
      (arrived ? row.arrived : row.lost).push(latency);
      slowest.push(timed);
      if (!arrived && latency > input.bounds.lostBoundMs)
        problems.push({
          paymentId: saga,
          detail: `${movement} reported ${(latency / 1000).toFixed(1)} s after the gateway made it, every callback lost (bound ${input.bounds.lostBoundMs / 1000} s)`,
        });
    }
  }
  const byFamily: TimeToTruth['byFamily'] = {};
  for (const [family, row] of samples) {
    const arrived = figures(row.arrived);
    const lost = figures(row.lost);
    byFamily[family] = { ...(arrived ? { arrived } : {}), ...(lost ? { lost } : {}) };
    if (arrived && arrived.p99Ms > input.bounds.callbackP99Ms)
      problems.push({
        paymentId: family,
        detail: `time to truth with a callback p99 ${(arrived.p99Ms / 1000).toFixed(1)} s over ${input.bounds.callbackP99Ms / 1000} s (${arrived.count} movements)`,
      });
  }
  slowest.sort((a, b) => b.latency - a.latency);
  slowestDisrupted.sort((a, b) => b.latency - a.latency);
  const disruptedFigures = figures(disrupted);
  const rows = [...samples.values()];
  const judgedWithCallback = rows.reduce((n, r) => n + r.arrived.length, 0);
  return {
    byFamily,
    judged: judgedWithCallback + rows.reduce((n, r) => n + r.lost.length, 0),
    judgedWithCallback,
    ...(disruptedFigures === undefined ? {} : { disrupted: disruptedFigures }),
    problems,
    slowest: slowest.slice(0, 5).map(({ paymentId, detail }) => ({ paymentId, detail })),
    ...(slowestDisrupted.length === 0
      ? {}
      : {
          slowestDisrupted: slowestDisrupted
            .slice(0, 5)
            .map(({ paymentId, detail }) => ({ paymentId, detail })),
        }),
  };
}

/**
 * One reading of an adapter replica's status queries: per endpoint, the counter's value, read
 * between `at` (the read began) and `until` (its answer came; absent: at `at`). `stale`: the
 * replica did not answer (down, or slow under load), so `counts` repeats its last reading.
 */
export type StatusReading = {
  readonly at: number;
  readonly until?: number;
  readonly stale?: boolean;
  readonly counts: ReadonlyMap<string, number>;
};

/**
 * The status queries sent to the gateway in a Prometheus text exposition, per endpoint: the
 * status budget's admissions (`gateway_adapter_status_admissions_total{outcome="admitted"}`),
 * counted when the query leaves for the gateway — what the gateway sees when it arrives. Not
 * `gateway_adapter_calls_total`, counted when a call ends: a slow answer (the chaos mix answers 5 %
 * of status queries 1.5 s late) moves it into a later window, and a window then counts more
 * queries than were sent in it (session 17: "16 in 1.0 s", budget 12/s + 4).
 */
export function statusCallsOf(metrics: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of metrics.split('\n')) {
    if (!line.startsWith('gateway_adapter_status_admissions_total{')) continue;
    if (/outcome="([^"]*)"/.exec(line)?.[1] !== 'admitted') continue;
    const endpoint = /endpoint="([^"]*)"/.exec(line)?.[1] ?? '';
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (Number.isFinite(value)) out.set(endpoint, (out.get(endpoint) ?? 0) + value);
  }
  return out;
}

/**
 * Whether the gateway saw more status queries on an endpoint than its budget allows: each
 * replica's share (GATEWAY_ADAPTER_REPLICAS: `budgetPerSecond` / replicas, `burst` / replicas)
 * judged between two of its answered readings — more than share × the longest the time between
 * them can be (the earlier read's start to the later one's answer) + its share of the burst. While
 * every replica keeps its share, the endpoint keeps the budget over any window; a replica judged
 * on its own readings is not misjudged when another one's /metrics is slow. A counter that went
 * down is a restarted replica: its new value is the window's. `maxPerSecond`: the endpoint's
 * highest rate over the rounds (every replica's reading of a round summed), for the report.
 */
export function statusBudgetExceeded(
  readings: ReadonlyMap<string, readonly StatusReading[]>,
  budgetPerSecond: number,
  burst: number,
): { readonly problems: Problem[]; readonly maxPerSecond: number } {
  const replicas = Math.max(1, readings.size);
  const [shareRate, shareBurst] = [budgetPerSecond / replicas, burst / replicas];
  const problems: Problem[] = [];
  const delta = (before: StatusReading, now: StatusReading, endpoint: string): number => {
    const [prior, value] = [before.counts.get(endpoint) ?? 0, now.counts.get(endpoint) ?? 0];
    return value >= prior ? value - prior : value;
  };
  for (const [replica, series] of readings) {
    const answered = series.filter((r) => r.stale !== true);
    for (let i = 1; i < answered.length; i++) {
      const [before, now] = [answered[i - 1], answered[i]];
      const seconds = ((now.until ?? now.at) - before.at) / 1000;
      if (seconds <= 0) continue;
      for (const endpoint of now.counts.keys()) {
        const n = delta(before, now, endpoint);
        if (n > shareRate * seconds + shareBurst)
          problems.push({
            paymentId: endpoint,
            detail: `${replica}: ${n} status queries in ${seconds.toFixed(1)} s (its share of the budget ${budgetPerSecond}/s: ${shareRate}/s + ${shareBurst})`,
          });
      }
    }
  }
  // Align the replicas' readings by round (they are read together, once per period).
  const rounds = Math.min(...[...readings.values()].map((r) => r.length));
  let maxPerSecond = 0;
  for (let i = 1; i < rounds; i++) {
    const perEndpoint = new Map<string, number>();
    let seconds = 0;
    for (const series of readings.values()) {
      const [before, now] = [series[i - 1], series[i]];
      seconds = Math.max(seconds, (now.at - before.at) / 1000);
      for (const endpoint of now.counts.keys())
        perEndpoint.set(endpoint, (perEndpoint.get(endpoint) ?? 0) + delta(before, now, endpoint));
    }
    if (seconds > 0)
      for (const n of perEndpoint.values()) maxPerSecond = Math.max(maxPerSecond, n / seconds);
  }
  return { problems, maxPerSecond };
}
