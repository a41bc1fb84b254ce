/**
 * The status queries the gateway sees: each adapter replica's `/metrics` read once a second (its
 * status budget's admissions per endpoint, `statusCallsOf`), for `statusBudgetExceeded`.
 */
import type { PaymentStack } from '../stack/payment-stack';
import { sleep } from '../stack/processes';
import { type StatusReading, statusCallsOf } from './time-to-truth';

export interface StatusSampler {
  /** Stops reading; the readings per replica. */
  stop(): Promise<Map<string, StatusReading[]>>;
}

export function sampleStatusCalls(stack: PaymentStack, periodMs = 1_000): StatusSampler {
  const readings = new Map<string, StatusReading[]>();
  let sampling = true;
  const loop = (async () => {
    while (sampling) {
      const at = Date.now();
      await Promise.all(
        stack.replicaNames('gateway-adapter').map(async (name) => {
          const counts = await fetch(`${stack.replicaUrl(name)}/metrics`, {
            signal: AbortSignal.timeout(Math.max(100, periodMs - 100)),
          })
            .then(async (r) => statusCallsOf(await r.text()))
            .catch(() => undefined);
          const series = readings.get(name) ?? [];
          // A replica down or slow to answer: its last reading stands (its counter resumes),
          // marked stale so that no window is judged on it.
          series.push(
            counts === undefined
              ? { at, stale: true, counts: series.at(-1)?.counts ?? new Map() }
              : { at, until: Date.now(), counts },
          );
          readings.set(name, series);
        }),
      );
      await sleep(Math.max(0, at + periodMs - Date.now()));
    }
  })();
  return {
    async stop() {
      sampling = false;
      await loop;
      return readings;
    },
  };
}
