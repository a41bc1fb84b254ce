import { createHash } from 'node:crypto';

export type CallbackSource = 'server-callback' | 'browser-return';

/**
 * A stable id for one notification: SHA-256 over the endpoint, the source and every received
 * parameter except `control`, sorted by name. A redelivery of the same callback (the gateway
 * retries up to 30 times) gets the same id, so the orchestrator's inbox drops the repeats; a
 * different callback for the same transaction (another status, type or amount) gets another.
 */
export function notificationId(
  kind: 'callback' | 'status-check-hint',
  source: CallbackSource,
  endpointId: string,
  params: Readonly<Record<string, string>>,
): string {
  const entries = Object.entries(params)
    .filter(([name]) => name !== 'control')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  // JSON keeps the boundaries between names and values unambiguous.
  const canonical = JSON.stringify(['callback-ingest/v1', kind, source, endpointId, entries]);
  return createHash('sha256').update(canonical, 'utf8').digest('hex');
}
