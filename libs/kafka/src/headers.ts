import type { IHeaders } from 'kafkajs';

/**
 * Kafka headers as strings. kafkajs delivers header values as Buffers, and a repeated header name
 * as an array; like Kafka's Java `Headers.lastHeader`, the last value wins. Values are decoded as
 * UTF-8.
 */
export function decodeHeaders(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const last = Array.isArray(value) ? value[value.length - 1] : value;
    if (last === undefined) continue;
    out[name] = typeof last === 'string' ? last : last.toString('utf8');
  }
  return out;
}
