/**
 * Requests the gateway is working on at once, per endpoint: how many now and the most seen since
 * the last reset. A merchant's per-endpoint concurrency limit is proven from the gateway's side
 * with it (`GET /_sandbox/concurrency`).
 */
export interface EndpointConcurrency {
  readonly inFlight: number;
  readonly peak: number;
}

export class ConcurrencyGauge {
  private readonly byEndpoint = new Map<string, { inFlight: number; peak: number }>();

  /** Counts one request in; the returned function counts it out (call it exactly once). */
  enter(endpointId: string): () => void {
    const entry = this.byEndpoint.get(endpointId) ?? { inFlight: 0, peak: 0 };
    entry.inFlight += 1;
    entry.peak = Math.max(entry.peak, entry.inFlight);
    this.byEndpoint.set(endpointId, entry);
    let left = false;
    return () => {
      if (left) return;
      left = true;
      entry.inFlight -= 1;
    };
  }

  view(): Record<string, EndpointConcurrency> {
    return Object.fromEntries(
      [...this.byEndpoint].map(([id, e]) => [id, { inFlight: e.inFlight, peak: e.peak }]),
    );
  }

  /** Peaks start again from what is in flight now. */
  reset(): void {
    for (const [id, e] of this.byEndpoint) {
      if (e.inFlight === 0) this.byEndpoint.delete(id);
      else e.peak = e.inFlight;
    }
  }
}
