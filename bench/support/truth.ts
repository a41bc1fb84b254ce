/**
 * The orchestrator's own time-to-truth histogram (`orchestrator_time_to_truth_seconds`: from the
 * gateway's answer reaching the adapter or callback-ingest to the commit of the events that
 * report it), read from its /metrics before and after a mode, so the benchmark prints it beside
 * its own figure (the sandbox's ledger charge → the final event received).
 */

const METRIC = 'orchestrator_time_to_truth_seconds';

/** Cumulative bucket counts by upper bound (seconds; Infinity for +Inf), summed over series. */
export type Buckets = ReadonlyMap<number, number>;

/** The histogram's buckets of one flow on a /metrics text, every operation and source summed. */
export function truthBuckets(metricsText: string, flow: string): Buckets {
  const buckets = new Map<number, number>();
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith(`${METRIC}_bucket{`) || !line.includes(`flow="${flow}"`)) continue;
    const le = /le="([^"]+)"/.exec(line)?.[1];
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (le === undefined || !Number.isFinite(value)) continue;
    const bound = le === '+Inf' ? Infinity : Number(le);
    buckets.set(bound, (buckets.get(bound) ?? 0) + value);
  }
  return buckets;
}

/** What the histogram gained between two readings. */
export function bucketsSince(before: Buckets, after: Buckets): Buckets {
  return new Map([...after].map(([bound, n]) => [bound, n - (before.get(bound) ?? 0)]));
}

/** The upper bound of the bucket the q-quantile falls in (seconds); undefined when empty. */
export function quantileBound(buckets: Buckets, q: number): number | undefined {
  const sorted = [...buckets].sort((a, b) => a[0] - b[0]);
  const total = sorted.at(-1)?.[1] ?? 0;
  if (total === 0) return undefined;
  return sorted.find(([, n]) => n >= q * total)?.[0];
}

/** One line: observations, and the p50 / p99 bucket bounds. */
export function truthHistogramLine(mode: string, gained: Buckets): string {
  const total = [...gained].sort((a, b) => a[0] - b[0]).at(-1)?.[1] ?? 0;
  const bound = (q: number) => {
    const b = quantileBound(gained, q);
    return b === undefined ? '—' : `≤ ${b === Infinity ? '+Inf' : `${b * 1000} ms`}`;
  };
  return `orchestrator's ${METRIC}, ${mode} (answer reached us → events committed), card-payment, ${total} answers: p50 ${bound(0.5)}, p99 ${bound(0.99)} (bucket bounds)`;
}

/** The orchestrator's /metrics text. */
export async function scrape(orchestratorUrl: string): Promise<string> {
  return (await fetch(`${orchestratorUrl}/metrics`)).text();
}

const ADMISSIONS = 'gateway_adapter_status_admissions_total';
const PRIORITIES = ['urgent', 'routine', 'payer', 'background'] as const;

/** The adapter's status admissions by `<priority>/<outcome>`, every endpoint summed. */
export type Admissions = ReadonlyMap<string, number>;

/** `gateway_adapter_status_admissions_total` of an adapter's /metrics text, by class and outcome. */
export function statusAdmissions(metricsText: string): Admissions {
  const counts = new Map<string, number>();
  for (const line of metricsText.split('\n')) {
    if (!line.startsWith(`${ADMISSIONS}{`)) continue;
    const priority = /priority="([^"]+)"/.exec(line)?.[1];
    const outcome = /outcome="([^"]+)"/.exec(line)?.[1];
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (priority === undefined || outcome === undefined || !Number.isFinite(value)) continue;
    const key = `${priority}/${outcome}`;
    counts.set(key, (counts.get(key) ?? 0) + value);
  }
  return counts;
}

/**
 * One line: the status budget's use by priority class over a mode (admitted and held per second,
 * from what the adapter's counter gained in `seconds`).
 */
export function statusBudgetLine(
  mode: string,
  before: Admissions,
  after: Admissions,
  seconds: number,
): string {
  const gained = (key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0);
  const perSecond = (n: number) => (seconds > 0 ? n / seconds : 0).toFixed(2);
  const classes = PRIORITIES.map((p) => {
    const admitted = gained(`${p}/admitted`);
    const held = gained(`${p}/held`);
    return `${p} ${admitted} admitted (${perSecond(admitted)}/s), ${held} held (${perSecond(held)}/s)`;
  });
  return `adapter's status budget, ${mode}, ${seconds.toFixed(1)} s (${ADMISSIONS}): ${classes.join('; ')}`;
}

/** An app's /metrics text (the adapter's, for the status budget). */
export async function scrapeApp(url: string): Promise<string> {
  return (await fetch(`${url}/metrics`)).text();
}
