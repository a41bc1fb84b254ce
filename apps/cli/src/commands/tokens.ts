import { AdminRole, type AdminScope, type AdminTokenListing } from '@payments/contracts';
import { type AdminOptions, adminGet, adminPost } from './admin';
import { UsageError } from './errors';

export interface CreateTokenOptions extends AdminOptions {
  readonly name?: string;
  readonly role?: string;
  /** Merchant endpoints the token is limited to; none: every merchant (`--all-merchants`). */
  readonly endpoint?: readonly string[];
  readonly allMerchants?: boolean;
}

/** The scope the options name: every merchant, or the listed endpoints (exactly one of the two). */
export function scopeOf(
  options: Pick<CreateTokenOptions, 'endpoint' | 'allMerchants'>,
): AdminScope {
  const endpoints = options.endpoint ?? [];
  if (options.allMerchants === true && endpoints.length > 0)
    throw new UsageError('--all-merchants or --endpoint, not both');
  if (options.allMerchants === true) return 'all';
  if (endpoints.length === 0)
    throw new UsageError('say which merchants: --endpoint <id> (repeatable) or --all-merchants');
  for (const id of endpoints)
    if (!/^\d{1,19}$/.test(id)) throw new UsageError(`--endpoint ${id}: a gateway endpoint id`);
  return { endpoints: [...endpoints] };
}

/** One token as a line: id, name, role, scope, created, revoked. */
export function tokenLine(t: AdminTokenListing): string {
  const scope = t.scope === 'all' ? 'all merchants' : `endpoints ${t.scope.endpoints.join(',')}`;
  const revoked = t.revokedAt === null ? 'active' : `revoked ${t.revokedAt} by ${t.revokedBy}`;
  return `${t.id}  ${t.name}  ${t.role}  ${scope}  created ${t.createdAt} by ${t.createdBy}  ${revoked}`;
}

/**
 * `payments tokens create`: a new admin token through the admin API (an approver's token that sees
 * every merchant). The token is printed once, on its own line, and never again: only its SHA-256
 * is stored.
 */
export async function createToken(
  options: CreateTokenOptions,
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<void> {
  if (options.name === undefined || options.name.trim() === '')
    throw new UsageError('--name <person> is required');
  const role = AdminRole.safeParse(options.role);
  if (!role.success) throw new UsageError(`--role: one of ${AdminRole.options.join(', ')}`);
  const created = (await adminPost(
    '/admin/tokens',
    { name: options.name, role: role.data, scope: scopeOf(options) },
    options,
  )) as AdminTokenListing & { token: string };
  if (options.json === true) {
    out(JSON.stringify(created));
    return;
  }
  err(tokenLine(created));
  err('the token (shown once, keep it safe; only its SHA-256 is stored):');
  out(created.token);
}

/** `payments tokens list`: the stored tokens (never a token or its hash). */
export async function listTokens(
  options: AdminOptions,
  out: (line: string) => void,
): Promise<void> {
  const tokens = (await adminGet('/admin/tokens', options)) as AdminTokenListing[];
  if (options.json === true) out(JSON.stringify(tokens));
  else for (const t of tokens) out(tokenLine(t));
}

/** `payments tokens revoke <id>`: refused by the admin API from now on. */
export async function revokeToken(
  id: string,
  options: AdminOptions,
  out: (line: string) => void,
): Promise<void> {
  const answer = await adminPost(`/admin/tokens/${encodeURIComponent(id)}/revoke`, {}, options);
  out(options.json === true ? JSON.stringify(answer) : `revoked ${id}`);
}
