import {
  type CanActivate,
  type ExecutionContext,
  ForbiddenException,
  Inject,
  Injectable,
  SetMetadata,
  UnauthorizedException,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../../config';
import { type AdminPrincipal, allows, authenticate } from '../../domain/admin/admin-tokens';

const ROLE = 'admin-role';

/** The least role a route needs (default viewer). */
export const RequiresRole = (role: AdminPrincipal['role']) => SetMetadata(ROLE, role);

/** The request's authenticated operator, set by AdminAuthGuard. */
export type AdminRequest = Request & { adminPrincipal?: AdminPrincipal };

/**
 * Bearer tokens of ADMIN_TOKENS (hashes, compared in constant time): no or unknown token → 401
 * (the answer does not say which), a viewer on an operator route → 403.
 */
@Injectable()
export class AdminAuthGuard implements CanActivate {
  constructor(
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<AdminRequest>();
    const result = authenticate(request.headers.authorization, this.config.admin.tokens);
    if (!result.ok) {
      throw new UnauthorizedException({
        code: 'UNAUTHENTICATED',
        message: 'a valid admin bearer token is required (Authorization: Bearer <token>)',
      });
    }
    const needed =
      this.reflector.getAllAndOverride<AdminPrincipal['role'] | undefined>(ROLE, [
        context.getHandler(),
        context.getClass(),
      ]) ?? 'viewer';
    if (!allows(result.principal.role, needed)) {
      throw new ForbiddenException({
        code: 'FORBIDDEN',
        message: `this needs the ${needed} role; ${result.principal.name} is a ${result.principal.role}`,
      });
    }
    request.adminPrincipal = result.principal;
    return true;
  }
}
