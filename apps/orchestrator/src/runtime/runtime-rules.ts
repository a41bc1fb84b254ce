import { createHash } from 'node:crypto';
import { canonicalJson, FINGERPRINT_EXCLUDED_FIELDS } from '../domain';
import type { CommandCatalogue } from './flow';

/**
 * Fingerprint of a command that failed validation, so a redelivery of the same invalid command is
 * a duplicate (re-emits its rejection) and not a second rejection. Only the hash is kept: the body
 * may hold clear card data (PLAIN_CARD_DATA), which must never be stored.
 */
export function invalidCommandFingerprint(raw: unknown): string {
  const body: Record<string, unknown> =
    raw !== null && typeof raw === 'object' && !Array.isArray(raw)
      ? { ...(raw as Record<string, unknown>) }
      : { value: raw };
  for (const field of FINGERPRINT_EXCLUDED_FIELDS) delete body[field];
  return `invalid:sha256:${createHash('sha256').update(canonicalJson(body)).digest('hex')}`;
}

/** merchant.endpointId of an unvalidated command, when it is a short string. */
export function readEndpointId(raw: unknown): string {
  if (raw === null || typeof raw !== 'object') return '';
  const merchant = (raw as Record<string, unknown>).merchant;
  if (merchant === null || typeof merchant !== 'object') return '';
  const endpointId = (merchant as Record<string, unknown>).endpointId;
  return typeof endpointId === 'string' && endpointId.length <= 64 ? endpointId : '';
}

/** At most one hint-driven status refresh per saga per interval. */
export function hintAllowed(lastHintAt: Date | null, now: Date, intervalMs: number): boolean {
  return lastHintAt === null || now.getTime() - lastHintAt.getTime() >= intervalMs;
}

/** Backoff of a timer whose firing failed: 1 s, 2 s, 4 s … up to 5 minutes. */
export function timerRetryDelayMs(attempts: number): number {
  return Math.min(5 * 60_000, 1000 * 2 ** Math.min(20, Math.max(0, attempts)));
}

/** A saga or command id as PostgreSQL prints a uuid: only those are looked up by their text. */
const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export function isCanonicalUuid(id: string): boolean {
  return CANONICAL_UUID.test(id);
}

/**
 * The records of the commands among raw inputs from the commands topic, for a unit of work's
 * prelude: those with a command id and a saga id in canonical form (others are recorded on their
 * own, as a flow's child commands are).
 */
export function commandRecords(
  raws: readonly unknown[],
  catalogue: CommandCatalogue,
): Array<{ commandId: string; fingerprint: string; sagaId: string }> {
  return raws.flatMap((raw) => {
    const parsed = catalogue.parse(raw);
    const { commandId, sagaId } = parsed.ok ? parsed.command : parsed.ids;
    if (commandId === undefined || sagaId === undefined) return [];
    if (!isCanonicalUuid(commandId) || !isCanonicalUuid(sagaId)) return [];
    return [{ commandId, fingerprint: parsed.fingerprint, sagaId }];
  });
}

/**
 * `catalogue` parsing each command from the topic once (it is pure: the same raw value, the same
 * answer), for the life of one unit of work; a flow's own commands are parsed every time.
 */
export function memoisedCatalogue(catalogue: CommandCatalogue): CommandCatalogue {
  const parsed = new Map<unknown, ReturnType<CommandCatalogue['parse']>>();
  return {
    parse(raw, origin = 'topic') {
      if (origin !== 'topic') return catalogue.parse(raw, origin);
      let result = parsed.get(raw);
      if (result === undefined) {
        result = catalogue.parse(raw, origin);
        parsed.set(raw, result);
      }
      return result;
    },
  };
}
