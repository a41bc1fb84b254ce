import { inspect } from 'node:util';

/** Endpoint ids as they appear in the callback path: the gateway's digits, or a configured name. */
export const ENDPOINT_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** Shortest control key accepted at boot: real keys are UUID-like (36 characters). */
export const MIN_CONTROL_KEY_LENGTH = 16;

export type ControlKeysResult =
  | { readonly ok: true; readonly store: ControlKeyStore }
  | { readonly ok: false; readonly problem: string };

/**
 * The merchant control keys callback-ingest verifies with, one per gateway endpoint. The keys
 * never leave this object except through `keyFor`: JSON, `inspect` and string conversion show
 * only the endpoint ids, so a stray log line cannot carry them.
 */
export class ControlKeyStore {
  readonly #keys: ReadonlyMap<string, string>;

  private constructor(keys: ReadonlyMap<string, string>) {
    this.#keys = keys;
  }

  /**
   * Parses `{"<endpointId>": "<key>"}`. Problems are described without any key value (and
   * without the JSON text, which holds them).
   */
  static fromJson(text: string): ControlKeysResult {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      return { ok: false, problem: 'a JSON object {"<endpointId>": "<control key>"} (not JSON)' };
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      return { ok: false, problem: 'a JSON object {"<endpointId>": "<control key>"}' };
    }
    const entries = Object.entries(parsed as Record<string, unknown>);
    if (entries.length === 0) return { ok: false, problem: 'at least one endpoint and its key' };
    const keys = new Map<string, string>();
    for (const [endpointId, key] of entries) {
      if (!ENDPOINT_ID.test(endpointId)) {
        return {
          ok: false,
          problem: `endpoint ids of 1-64 letters, digits, "_" or "-" (got ${JSON.stringify(endpointId.slice(0, 64))})`,
        };
      }
      if (typeof key !== 'string' || key.length < MIN_CONTROL_KEY_LENGTH || key.trim() !== key) {
        return {
          ok: false,
          problem: `a control key of at least ${MIN_CONTROL_KEY_LENGTH} characters without surrounding spaces for endpoint ${endpointId}`,
        };
      }
      keys.set(endpointId, key);
    }
    return { ok: true, store: new ControlKeyStore(keys) };
  }

  static of(keys: Readonly<Record<string, string>>): ControlKeyStore {
    const result = ControlKeyStore.fromJson(JSON.stringify(keys));
    if (!result.ok) throw new Error(`invalid control keys: ${result.problem}`);
    return result.store;
  }

  /** The key of a configured endpoint, or undefined (unknown endpoint → 404). */
  keyFor(endpointId: string): string | undefined {
    return this.#keys.get(endpointId);
  }

  get endpointIds(): readonly string[] {
    return [...this.#keys.keys()];
  }

  toJSON(): { endpoints: readonly string[] } {
    return { endpoints: this.endpointIds };
  }

  toString(): string {
    return `ControlKeyStore(${this.endpointIds.join(', ')})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}
