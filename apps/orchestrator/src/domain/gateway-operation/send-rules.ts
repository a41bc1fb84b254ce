import { notSentRetryDelay } from './polling';

/**
 * The attempt number of the one resend after the gateway showed no trace of a request: above any
 * attempt a not-sent resend can reach, so the adapter's ledger and the results inbox (both keyed
 * by request id and attempt) never confuse the two.
 */
export const NEVER_RECEIVED_ATTEMPT = 1000;

/** How long a request held back by our own breaker or limits may wait before it fails. */
export const DEFAULT_OWN_LIMIT_WAIT_MS = 10 * 60 * 1000;

/**
 * What to do after a `not-sent` result (nothing reached the gateway), for every flow:
 *  - held back by our own breaker or limits (`retryAt`): resend at `retryAt`, without spending
 *    the send attempts, until `ownLimitWaitMs` after the request;
 *  - otherwise: resend after the not-sent backoff while attempts remain.
 * Undefined: the operation fails as not-sent.
 */
export function resendAfterNotSent(args: {
  attempt: number;
  retryAt: string | undefined;
  requestedAt: string;
  now: string;
  maxSendAttempts: number;
  ownLimitWaitMs: number | undefined;
}): { attempt: number; notBefore: string } | undefined {
  const { attempt, retryAt, now } = args;
  const nowMs = Date.parse(now);
  if (retryAt !== undefined) {
    const waited = nowMs - Date.parse(args.requestedAt);
    if (
      attempt + 1 >= NEVER_RECEIVED_ATTEMPT ||
      waited >= (args.ownLimitWaitMs ?? DEFAULT_OWN_LIMIT_WAIT_MS)
    )
      return undefined;
    return {
      attempt: attempt + 1,
      notBefore: new Date(Math.max(Date.parse(retryAt), nowMs)).toISOString(),
    };
  }
  if (attempt >= args.maxSendAttempts) return undefined;
  return {
    attempt: attempt + 1,
    notBefore: new Date(nowMs + notSentRetryDelay(attempt)).toISOString(),
  };
}
