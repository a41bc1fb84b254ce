import type { Attributes } from '@opentelemetry/api';

/**
 * Query strings never reach a span: a gateway callback's carries its control checksum, card BIN
 * and last four digits, the payer's e-mail (the card-data rule of DEVELOPERS.md covers telemetry).
 */
export const REDACTED = 'REDACTED';

/** `url.full` and `url.query` of an outgoing request with its query string redacted. */
export function redactedUrl(origin: string, path: string): Attributes {
  const at = path.indexOf('?');
  if (at < 0) return {};
  return { 'url.full': `${origin}${path.slice(0, at)}?${REDACTED}`, 'url.query': REDACTED };
}

/** Paths whose requests are not traced: probes and scrapes would drown the payments' traces. */
export const UNTRACED_PATH = /^\/(health|metrics)(\/|\?|$)/;
