import { createHash, timingSafeEqual } from 'node:crypto';
import { jsonText } from '@payments/config';
import { z } from 'zod';
import type { AdminRole as AdminRoleName } from '@payments/contracts';

/**
 * Bearer tokens of the admin API. Configuration holds only the SHA-256 of each token
 * (ADMIN_TOKENS), never the token; a presented token is hashed and compared with every configured
 * hash in constant time (no early exit), so neither the token nor which entry matched leaks.
 */

export interface AdminPrincipal {
  readonly name: string;
  readonly role: AdminRoleName;
}

export interface AdminToken extends AdminPrincipal {
  /** SHA-256 of the token, 64 lowercase hex digits (configuration is frozen: no Buffer). */
  readonly sha256: string;
}

const TokenEntry = z.strictObject({
  name: z.string().trim().min(1).max(128),
  role: z.enum(['viewer', 'operator']),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/i, 'the SHA-256 of the token, 64 hex digits (never the token itself)'),
});

/** `ADMIN_TOKENS`: JSON `[{"name": "alice", "role": "operator", "sha256": "<hex>"}]`; default none. */
export const AdminTokensSchema = jsonText('[]').pipe(
  z
    .array(TokenEntry)
    .max(100)
    .refine((list) => new Set(list.map((t) => t.name)).size === list.length, 'names must be unique')
    .refine(
      (list) => new Set(list.map((t) => t.sha256.toLowerCase())).size === list.length,
      'two entries have the same token',
    )
    .transform((list): AdminToken[] =>
      list.map((t) => ({ name: t.name, role: t.role, sha256: t.sha256.toLowerCase() })),
    ),
);

/** SHA-256 of a token, hex: what an operator puts in ADMIN_TOKENS for a token they generated. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export type Authentication =
  | { readonly ok: true; readonly principal: AdminPrincipal }
  | { readonly ok: false; readonly reason: 'missing' | 'malformed' | 'unknown' };

/** Who an `Authorization: Bearer <token>` header names, if anyone. */
export function authenticate(
  authorization: string | undefined,
  tokens: readonly AdminToken[],
): Authentication {
  if (authorization === undefined || authorization.trim() === '') {
    return { ok: false, reason: 'missing' };
  }
  const match = /^Bearer ([\x21-\x7e]{16,512})$/.exec(authorization.trim());
  if (!match?.[1]) return { ok: false, reason: 'malformed' };
  const presented = createHash('sha256').update(match[1], 'utf8').digest();
  let found: AdminToken | undefined;
  for (const token of tokens) {
    // Every entry is compared, whatever matched before: the time does not depend on the match.
    if (timingSafeEqual(presented, Buffer.from(token.sha256, 'hex')) && found === undefined) {
      found = token;
    }
  }
  return found === undefined
    ? { ok: false, reason: 'unknown' }
    : { ok: true, principal: { name: found.name, role: found.role } };
}

/** Viewers read; operators read and act. */
export function allows(role: AdminRoleName, needed: AdminRoleName): boolean {
  return needed === 'viewer' || role === 'operator';
}
