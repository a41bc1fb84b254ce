/** Pure helpers every flow's domain may use (no I/O, no framework). */
export { DomainError, type DomainErrorCode } from './domain-error';
export {
  commandFingerprint,
  canonicalJson,
  idempotencyVerdict,
  FINGERPRINT_EXCLUDED_FIELDS,
} from './fingerprint';
export type { IdempotencyVerdict } from './fingerprint';
export { nextPollDelay, notSentRetryDelay, POLL_BANDS } from './gateway-operation/polling';
export { derivedUuid } from './derived-id';
export {
  DEFAULT_OWN_LIMIT_WAIT_MS,
  NEVER_RECEIVED_ATTEMPT,
  resendAfterNotSent,
} from './gateway-operation/send-rules';
