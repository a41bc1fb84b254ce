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
  readonly csrf: string;
  /** Unix ms after which the session is refused. */
  readonly expiresAt: number;
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
  ) {
    this.key = Buffer.from(hkdfSync('sha256', secret, 'payments-console', 'session-key', 32));
  }

  /** A new session (anonymous unless `user`), with a fresh CSRF token. */
  fresh(user?: SignedInUser): Session {
    return {
      csrf: randomBytes(24).toString('base64url'),
      expiresAt: this.now() + this.ttlMs,
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
      if (typeof session.csrf !== 'string' || typeof session.expiresAt !== 'number') {
        return undefined;
      }
      return session.expiresAt > this.now() ? session : undefined;
    } catch {
      return undefined;
    }
  }
}
