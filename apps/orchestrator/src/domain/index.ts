export * from './payment';
export { DomainError, type DomainErrorCode } from './shared/domain-error';
export {
  commandFingerprint,
  canonicalJson,
  idempotencyVerdict,
  FINGERPRINT_EXCLUDED_FIELDS,
} from './shared/fingerprint';
export type { IdempotencyVerdict } from './shared/fingerprint';
export { nextPollDelay, notSentRetryDelay, POLL_BANDS } from './shared/polling';
