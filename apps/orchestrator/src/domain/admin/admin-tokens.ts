import { createHash, timingSafeEqual } from 'node:crypto';
import { jsonText } from '@payments/config';
import { z } from 'zod';
import { AdminRole, AdminScope } from '@payments/contracts';

type AdminRoleName = AdminRole;

/**
 * Bearer tokens of the admin API. Configuration holds only the SHA-256 of each token
 * (ADMIN_TOKENS), never the token; a presented token is hashed and compared with every configured
 * hash in constant time (no early exit), so neither the token nor which entry matched leaks.
 */

/**
 * Who acts: the token's name (a person: four eyes compares names, so one person's tokens share
 * it), role and scope (the merchants the token sees).
 */
export interface AdminPrincipal {
  readonly name: string;
  readonly role: AdminRoleName;
  readonly scope: AdminScope;
}

export interface AdminToken extends AdminPrincipal {
  /** SHA-256 of the token, 64 lowercase hex digits (configuration is frozen: no Buffer). */
  readonly sha256: string;
}

const TokenEntry = z.strictObject({
  name: z.string().trim().min(1).max(128),
  role: AdminRole,
  /** Default: every merchant. */
  scope: AdminScope.default('all'),
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/i, 'the SHA-256 of the token, 64 hex digits (never the token itself)'),
});

/**
 * `ADMIN_TOKENS`: JSON `[{"name": "alice", "role": "operator", "scope": {"endpoints": ["1234"]},
 * "sha256": "<hex>"}]` (scope optional: all merchants); default none.
 */
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
      list.map((t) => ({
        name: t.name,
        role: t.role,
        scope: t.scope,
        sha256: t.sha256.toLowerCase(),
      })),
    ),
);

/** SHA-256 of a token, hex: what an operator puts in ADMIN_TOKENS for a token they generated. */
export function tokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export type Authentication =
  | { readonly ok: true; readonly principal: AdminPrincipal }
  | { readonly ok: false; readonly reason: 'missing' | 'malformed' | 'unknown' };

/** The token an `Authorization: Bearer <token>` header presents, or why there is none. */
export function presentedToken(
  authorization: string | undefined,
): { readonly ok: true; readonly sha256: string } | Extract<Authentication, { ok: false }> {
  if (authorization === undefined || authorization.trim() === '') {
    return { ok: false, reason: 'missing' };
  }
  const match = /^Bearer ([\x21-\x7e]{16,512})$/.exec(authorization.trim());
  if (!match?.[1]) return { ok: false, reason: 'malformed' };
  return { ok: true, sha256: tokenHash(match[1]) };
}

/** Who an `Authorization: Bearer <token>` header names among the configured tokens, if anyone. */
export function authenticate(
  authorization: string | undefined,
  tokens: readonly AdminToken[],
): Authentication {
  const presented = presentedToken(authorization);
  if (!presented.ok) return presented;
  const found = configuredToken(presented.sha256, tokens);
  return found === undefined ? { ok: false, reason: 'unknown' } : { ok: true, principal: found };
}

/** The configured token with this SHA-256, compared with every entry in constant time. */
export function configuredToken(
  sha256: string,
  tokens: readonly AdminToken[],
): AdminPrincipal | undefined {
  const presented = Buffer.from(sha256, 'hex');
  let found: AdminToken | undefined;
  for (const token of tokens) {
    // Every entry is compared, whatever matched before: the time does not depend on the match.
    if (timingSafeEqual(presented, Buffer.from(token.sha256, 'hex')) && found === undefined) {
      found = token;
    }
  }
  return found === undefined
    ? undefined
    : { name: found.name, role: found.role, scope: found.scope };
}

const RANK: Readonly<Record<AdminRoleName, number>> = { viewer: 0, operator: 1, approver: 2 };

/** Viewers read; operators read and act; approvers act and give second approvals. */
export function allows(role: AdminRoleName, needed: AdminRoleName): boolean {
  return RANK[role] >= RANK[needed];
}

/** Whether a scope sees a merchant endpoint's sagas. */
export function inScope(scope: AdminScope, endpointId: string): boolean {
  return scope === 'all' || scope.endpoints.includes(endpointId);
}

/** The endpoints a scope is limited to (undefined: every merchant), for a query's filter. */
export function scopedEndpoints(scope: AdminScope): readonly string[] | undefined {
  return scope === 'all' ? undefined : scope.endpoints;
}

/**
 * A new token's text: 32 random bytes, base64url, with a prefix that says what it is (so a
 * secret scanner and a person recognise one). Only its SHA-256 is kept.
 */
export function newTokenText(random: Buffer): string {
  return `pat_${random.toString('base64url')}`;
}
