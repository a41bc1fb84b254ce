/**
 * Which database failures may be retried, and a bounded retry while a failover runs.
 *
 * A failed statement is one of three kinds:
 * - `not-applied`: the server provably did not apply it — it never got a connection to a primary
 *   (connection refused, connect timeout, no writable host: {@link NoWritablePrimaryError}, the
 *   server starting or shutting down before the session began: 57P03, 08001, 08004) or it reached
 *   a standby that refused it (25006 read_only_sql_transaction: a session that was still on the
 *   demoted primary). Retrying is safe for every statement.
 * - `outcome-unknown`: the connection broke while the statement or its COMMIT was in flight
 *   (ECONNRESET, "Connection terminated", 57P01/57P02 admin or crash shutdown, 08000/08003/08006,
 *   TypeORM's QueryRunner(Provider)AlreadyReleasedError for the rest of a transaction whose
 *   connection died): it may or may not have committed. Only work that is idempotent as a whole may be retried.
 * - `other`: anything else (constraint violations, bugs): never retried here.
 *
 * Who retries what (docs/design.md, "Database failover"): the orchestrator's unit of work retries
 * `not-applied` and `outcome-unknown` (idempotent by its inbox and command records: a unit that
 * did commit finds its own rows and does nothing again); the adapter's claim and hand-off retry
 * `not-applied` only — a claim whose commit is unknown is never re-run in place: the message's
 * redelivery re-runs it against what the database really holds (its own row, if it committed,
 * makes the claim refuse, which never sends).
 */
export type DatabaseFailure = 'not-applied' | 'outcome-unknown' | 'other';

const NOT_APPLIED_SQLSTATES = new Set(['25006', '57P03', '08001', '08004']);
const UNKNOWN_SQLSTATES = new Set(['57P01', '57P02', '08000', '08003', '08006', '08007']);
const NOT_APPLIED_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'NO_WRITABLE_PRIMARY',
]);
const UNKNOWN_CODES = new Set(['ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ECONNABORTED']);

const RELEASED_RUNNER = new Set([
  'QueryRunnerProviderAlreadyReleasedError',
  'QueryRunnerAlreadyReleasedError',
]);

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  driverError?: unknown;
  cause?: unknown;
}

/** The kind of a database failure (TypeORM's QueryFailedError is looked through to pg's error). */
export function classifyDatabaseError(error: unknown): DatabaseFailure {
  const seen = new Set<unknown>();
  let current: unknown = error;
  let verdict: DatabaseFailure = 'other';
  while (typeof current === 'object' && current !== null && !seen.has(current)) {
    seen.add(current);
    const e = current as ErrorLike;
    const code = typeof e.code === 'string' ? e.code : undefined;
    const message = typeof e.message === 'string' ? e.message : '';
    if (code !== undefined && (NOT_APPLIED_SQLSTATES.has(code) || NOT_APPLIED_CODES.has(code))) {
      return 'not-applied';
    }
    if (
      /timeout exceeded when trying to connect|Connection terminated due to connection timeout/i.test(
        message,
      )
    ) {
      return 'not-applied';
    }
    if (
      (code !== undefined && (UNKNOWN_SQLSTATES.has(code) || UNKNOWN_CODES.has(code))) ||
      // TypeORM releases a transaction's query runner when its connection errors; the
      // transaction's next statement or its COMMIT then fails with one of these.
      (typeof e.name === 'string' && RELEASED_RUNNER.has(e.name)) ||
      /Connection terminated|not queryable|terminating connection|server closed the connection/i.test(
        message,
      )
    ) {
      verdict = 'outcome-unknown';
    }
    current = e.driverError ?? e.cause;
  }
  return verdict;
}

/**
 * The database could not be reached or could not take a write (no writable primary, a connection
 * refused or cut, a read-only standby): the statement's input is not at fault. A consumer's
 * handler answers its runner's `isUnavailable` with it, so such a message waits for the database
 * instead of being dead-lettered.
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  return classifyDatabaseError(error) !== 'other';
}

export interface FailoverRetryPolicy {
  /** Give up (rethrow the last error) once this long has passed since the first try. */
  readonly deadlineMs: number;
  /** First wait between tries; doubles up to maxDelayMs. */
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
}

/** Covers pg_auto_failover's detection and promotion (seconds) with room to spare. */
export const DEFAULT_FAILOVER_RETRY: FailoverRetryPolicy = {
  deadlineMs: 30_000,
  initialDelayMs: 100,
  maxDelayMs: 2_000,
};

export interface RetryEnvironment {
  readonly now: () => number;
  readonly sleep: (ms: number) => Promise<void>;
  /** Told of each failure that will be retried. */
  readonly onRetry?: (failure: DatabaseFailure, error: unknown, attempt: number) => void;
}

const realEnvironment: RetryEnvironment = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/**
 * Runs `work`, and again after a failure of a kind in `retryOn`, with growing pauses, until it
 * succeeds or the deadline passes (then the last error is thrown: the caller's own error path —
 * the consumer's retry, readiness — takes over). Never retries `other`.
 */
export async function retryOnFailover<T>(
  work: () => Promise<T>,
  retryOn: readonly DatabaseFailure[],
  policy: FailoverRetryPolicy = DEFAULT_FAILOVER_RETRY,
  env: RetryEnvironment = realEnvironment,
): Promise<T> {
  const start = env.now();
  let delay = policy.initialDelayMs;
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      const failure = classifyDatabaseError(error);
      if (failure === 'other' || !retryOn.includes(failure)) throw error;
      if (env.now() - start + delay > policy.deadlineMs) throw error;
      env.onRetry?.(failure, error, attempt);
      await env.sleep(delay);
      delay = Math.min(delay * 2, policy.maxDelayMs);
    }
  }
}
