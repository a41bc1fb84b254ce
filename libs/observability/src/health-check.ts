/**
 * The contract between components that know whether they are healthy (the Kafka consumer
 * runner, the database, an HTTP client pool) and the health endpoints that report it.
 * A component implements HealthCheck; an app lists its checks under LIVENESS_CHECKS (is the
 * process able to make progress? a crashed consumer is not) and READINESS_CHECKS (can it take
 * traffic now? broker and database reachable).
 */
export interface HealthCheck {
  /** Component name shown in the health output, e.g. 'kafka', 'database', 'consumer:commands'. */
  readonly name: string;
  /** Resolves when healthy; throws or rejects with a short, secret-free reason when not. */
  check(): Promise<void> | void;
}

export const LIVENESS_CHECKS = Symbol('LIVENESS_CHECKS');
export const READINESS_CHECKS = Symbol('READINESS_CHECKS');
