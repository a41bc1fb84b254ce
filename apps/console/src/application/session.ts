import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { AdminRole, AdminScope } from '@payments/contracts';

/**
 * Who signed in: the admin API's answer to their token (name, role, the merchants it sees), and
 * the token the API asks for. The API enforces the scope on every call; the console only shows it.
 */
export interface SignedInUser {
  readonly token: string;
  readonly name: string;
  readonly role: AdminRole;
  /** Absent in a session sealed before scopes existed (the API still enforces the token's). */
  readonly scope?: AdminScope;
}

/**
 * What the session cookie carries, sealed: a CSRF token every POST must echo, when it ends, and
 * the user once signed in. Anonymous sessions exist so that the sign-in form has a CSRF token too.
 */
export interface Session {
  /** Random: what sign-out revokes (SessionRevocations). */
  readonly id: string;
  readonly csrf: string;
  /** Unix ms after which the session is refused. */
  readonly expiresAt: number;
  /** Unix ms of the last request seen with it: idle longer than the idle timeout, it is refused. */
  readonly seenAt: number;
  readonly user?: SignedInUser;
}

const IV_BYTES = 12;
const TAG_BYTES = 16;
// Binds every sealed value to this use: a value sealed for anything else never opens as a session.
const AAD = Buffer.from('payments-console-session-v1');

/**
 * Seals a session into a cookie value with AES-256-GCM (key derived from the session secret by
 * HKDF, a random IV per seal): its content is unreadable and any change makes it unopenable, so
 * the admin token it carries never reaches the browser in a usable form.
 */
export class SessionSealer {
  private readonly key: Buffer;

  constructor(
    secret: string,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
    private readonly idleMs: number = ttlMs,
  ) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'payments-console', 'session-key', 32));
  }

  /** A new session (anonymous unless `user`), with a fresh CSRF token. */
  fresh(user?: SignedInUser): Session {
    const now = this.now();
    return {
      id: randomBytes(18).toString('base64url'),
      csrf: randomBytes(24).toString('base64url'),
      expiresAt: now + this.ttlMs,
      seenAt: now,
      ...(user === undefined ? {} : { user }),
    };
  }

  seal(session: Session): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(AAD);
    const body = Buffer.concat([cipher.update(JSON.stringify(session), 'utf8'), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
  }

  /** The session a cookie value seals, or undefined if it is forged, altered, or expired. */
  open(value: string | undefined): Session | undefined {
    if (value === undefined || value.length > 8_192) return undefined;
    const raw = Buffer.from(value, 'base64url');
    if (raw.length <= IV_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(AAD);
      decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
      const text = Buffer.concat([
        decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
      const session = JSON.parse(text) as Session;
      if (
        typeof session.id !== 'string' ||
        typeof session.csrf !== 'string' ||
        typeof session.expiresAt !== 'number' ||
        typeof session.seenAt !== 'number'
      ) {
        return undefined;
      }
      const now = this.now();
      return session.expiresAt > now && now - session.seenAt <= this.idleMs ? session : undefined;
    } catch {
      return undefined;
    }
  }

  /** The session seen now: its idle clock restarts (re-sealed only once it is worth a cookie). */
  touch(session: Session): Session | undefined {
    const now = this.now();
    const every = Math.min(60_000, this.idleMs / 4);
    return now - session.seenAt >= every ? { ...session, seenAt: now } : undefined;
  }
}

/**
 * The sessions signed out before they expired (by id, each kept until its own expiry): a cookie
 * copied before sign-out opens, but names a revoked session and is refused. Held by this console
 * process; see the README for replicas.
 */
export class SessionRevocations {
  private readonly revoked = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  revoke(session: Session): void {
    this.prune();
    this.revoked.set(session.id, session.expiresAt);
  }

  isRevoked(session: Session): boolean {
    return this.revoked.has(session.id);
  }

  private prune(): void {
    const now = this.now();
    for (const [id, expiresAt] of this.revoked) if (expiresAt <= now) this.revoked.delete(id);
  }
}

/**
 * Failed sign-ins counted per key (the client's address, the token's first characters) in a
 * sliding window: past the limit, sign-in is refused before the admin API is asked.
 */
export class SignInThrottle {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until the first of `keys` may try again; 0 when none is throttled. */
  retryAfterSeconds(keys: readonly string[]): number {
    const now = this.now();
    let wait = 0;
    for (const key of keys) {
      const recent = this.recent(key, now);
      if (recent.length >= this.maxFailures) {
        wait = Math.max(wait, Math.ceil((recent[0] + this.windowMs - now) / 1000));
      }
    }
    return wait;
  }

  failed(keys: readonly string[]): void {
    const now = this.now();
    for (const key of keys) this.failures.set(key, [...this.recent(key, now), now]);
  }

  succeeded(keys: readonly string[]): void {
    for (const key of keys) this.failures.delete(key);
  }

  private recent(key: string, now: number): number[] {
    const kept = (this.failures.get(key) ?? []).filter((at) => at > now - this.windowMs);
    if (kept.length === 0) this.failures.delete(key);
    else this.failures.set(key, kept);
    return kept;
  }
}

/** The keys a sign-in attempt is counted under: who asks, and which token they try. */
export function signInKeys(client: string, token: string): string[] {
  return [`client:${client}`, `token:${token.slice(0, 8)}`];
}
