import {
  type CanActivate,
  type ExecutionContext,
  ForbiddenException,
  Injectable,
  SetMetadata,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { AdminTokenService } from '../../application/admin/admin-token.service';
import { type AdminPrincipal, allows, presentedToken } from '../../domain/admin/admin-tokens';

const ROLE = 'admin-role';
const ALL_MERCHANTS = 'admin-all-merchants';

/** The least role a route needs (default viewer). */
export const RequiresRole = (role: AdminPrincipal['role']) => SetMetadata(ROLE, role);

/**
 * A route whose answer spans merchants and is not filtered per saga (dead letters, reconciliation
 * runs, the live stream, the tokens): only a token whose scope is every merchant may use it.
 */
export const RequiresAllMerchants = () => SetMetadata(ALL_MERCHANTS, true);

/** The request's authenticated operator, set by AdminAuthGuard. */
export type AdminRequest = Request & { adminPrincipal?: AdminPrincipal };

/** The principal AdminAuthGuard set (a route behind the guard always has one). */
export function principalOf(request: AdminRequest): AdminPrincipal {
  const principal = request.adminPrincipal;
  if (principal === undefined) throw new Error('AdminAuthGuard did not run');
  return principal;
}

/**
 * Bearer tokens of ADMIN_TOKENS and of the `admin_tokens` table (hashes only; a revoked one
 * refused from its revocation on): no, unknown or revoked token → 401 (the answer does not say
 * which), a role below the route's → 403, a merchant-scoped token on a route that spans merchants
 * → 403.
 */
@Injectable()
export class AdminAuthGuard implements CanActivate {
  constructor(
    private readonly tokens: AdminTokenService,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<AdminRequest>();
    const presented = presentedToken(request.headers.authorization);
    const principal = presented.ok ? await this.tokens.principalOf(presented.sha256) : undefined;
    if (principal === undefined) {
      throw new UnauthorizedException({
        code: 'UNAUTHENTICATED',
        message: 'a valid admin bearer token is required (Authorization: Bearer <token>)',
      });
    }
    const targets = [context.getHandler(), context.getClass()];
    const needed =
      this.reflector.getAllAndOverride<AdminPrincipal['role'] | undefined>(ROLE, targets) ??
      'viewer';
    if (!allows(principal.role, needed)) {
      throw new ForbiddenException({
        code: 'FORBIDDEN',
        message: `this needs the ${needed} role; ${principal.name} is a ${principal.role}`,
      });
    }
    if (
      this.reflector.getAllAndOverride<boolean | undefined>(ALL_MERCHANTS, targets) === true &&
      principal.scope !== 'all'
    ) {
      throw new ForbiddenException({
        code: 'FORBIDDEN',
        message: `this spans every merchant; ${principal.name}'s token is limited to some`,
      });
    }
    request.adminPrincipal = principal;
    return true;
  }
}
