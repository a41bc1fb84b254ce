export interface ObservabilityOptions {
  /** Service name, added as the `service` label of every metric. */
  readonly service: string;
  /** Per-check timeout of the health endpoints (default 3000 ms). */
  readonly checkTimeoutMs?: number;
}

export const OBSERVABILITY_OPTIONS = Symbol('OBSERVABILITY_OPTIONS');
