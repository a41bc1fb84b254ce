import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { AdminRole, AdminScope, AdminTokenListing } from '@payments/contracts';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../../config';
import {
  type AdminPrincipal,
  configuredToken,
  newTokenText,
  tokenHash,
} from '../../domain/admin/admin-tokens';
import { Database } from '../../persistence/database';
import { Clock, IdGenerator } from '../../runtime/clock';

interface TokenRow {
  id: string;
  name: string;
  role: AdminRole;
  scope: AdminScope;
  created_at: Date;
  created_by: string;
  revoked_at: Date | null;
  revoked_by: string | null;
}

export type RevokeResult = 'revoked' | 'not-found' | 'already-revoked';

/**
 * The admin tokens: the configured ones (ADMIN_TOKENS, fixed for the process's life) and the
 * stored ones (`admin_tokens`, created and revoked through the admin API). A presented token is
 * hashed once; the configured list is searched first (constant time), then the table by its
 * hash, unrevoked only — read on every request, so a revocation holds from its commit. The two
 * combine as one set of principals: a name is a person wherever their token comes from (four
 * eyes compares names), and a configured token can only be revoked by removing it from
 * ADMIN_TOKENS (the table never holds it).
 */
@Injectable()
export class AdminTokenService {
  constructor(
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  /** Who the token with this SHA-256 names, if it is configured or stored and not revoked. */
  async principalOf(sha256: string): Promise<AdminPrincipal | undefined> {
    const configured = configuredToken(sha256, this.config.admin.tokens);
    if (configured !== undefined) return configured;
    const [row] = await this.db.read((db) =>
      db.query<Array<Pick<TokenRow, 'name' | 'role' | 'scope'>>>(
        `SELECT name, role, scope FROM admin_tokens WHERE sha256 = $1 AND revoked_at IS NULL`,
        [sha256],
      ),
    );
    return row === undefined ? undefined : { name: row.name, role: row.role, scope: row.scope };
  }

  /** A new token: returned once (its text is never stored), listed from now on. */
  async create(
    by: AdminPrincipal,
    token: { name: string; role: AdminRole; scope: AdminScope },
  ): Promise<AdminTokenListing & { token: string }> {
    const text = newTokenText(randomBytes(32));
    const id = this.ids.next();
    const now = this.clock.now();
    await this.db.transaction((tx) =>
      tx.query(
        `INSERT INTO admin_tokens (id, sha256, name, role, scope, created_at, created_by)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7)`,
        [id, tokenHash(text), token.name, token.role, JSON.stringify(token.scope), now, by.name],
      ),
    );
    return {
      id,
      ...token,
      createdAt: now.toISOString(),
      createdBy: by.name,
      revokedAt: null,
      revokedBy: null,
      token: text,
    };
  }

  /** The stored tokens, newest first (the configured ones are in ADMIN_TOKENS). */
  async list(): Promise<AdminTokenListing[]> {
    const rows = await this.db.read((db) =>
      db.query<TokenRow[]>(
        `SELECT id, name, role, scope, created_at, created_by, revoked_at, revoked_by
           FROM admin_tokens ORDER BY created_at DESC, id`,
      ),
    );
    return rows.map((r) => ({
      id: r.id,
      name: r.name,
      role: r.role,
      scope: r.scope,
      createdAt: r.created_at.toISOString(),
      createdBy: r.created_by,
      revokedAt: r.revoked_at?.toISOString() ?? null,
      revokedBy: r.revoked_by,
    }));
  }

  async revoke(by: AdminPrincipal, id: string): Promise<RevokeResult> {
    return this.db.transaction(async (tx) => {
      const [row] = await tx.query<Array<{ revoked_at: Date | null }>>(
        `SELECT revoked_at FROM admin_tokens WHERE id = $1 FOR UPDATE`,
        [id],
      );
      if (row === undefined) return 'not-found';
      if (row.revoked_at !== null) return 'already-revoked';
      await tx.query(`UPDATE admin_tokens SET revoked_at = $2, revoked_by = $3 WHERE id = $1`, [
        id,
        this.clock.now(),
        by.name,
      ]);
      return 'revoked';
    });
  }
}
