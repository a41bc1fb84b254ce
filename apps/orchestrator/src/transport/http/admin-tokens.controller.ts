import {
  Body,
  ConflictException,
  Controller,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  ParseUUIDPipe,
  Post,
  Req,
  UseGuards,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ADMIN_ROLES, AdminRole, AdminScope, type AdminTokenListing } from '@payments/contracts';
import { z } from 'zod';
import { AdminTokenService } from '../../application/admin/admin-token.service';
import {
  AdminAuthGuard,
  type AdminRequest,
  principalOf,
  RequiresAllMerchants,
  RequiresRole,
} from './admin-auth.guard';
import { errorSchema, parsed, scopeSchema } from './admin.controller';

/** POST /admin/tokens body. */
export const CreateTokenBody = z.strictObject({
  name: z.string().trim().min(1).max(128),
  role: AdminRole,
  scope: AdminScope,
});

const listingSchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    role: { type: 'string', enum: [...ADMIN_ROLES] },
    scope: scopeSchema,
    createdAt: { type: 'string', format: 'date-time' },
    createdBy: { type: 'string' },
    revokedAt: { type: 'string', format: 'date-time', nullable: true },
    revokedBy: { type: 'string', nullable: true },
  },
};

/**
 * The stored admin tokens (`payments tokens create|list|revoke`): created by an approver whose
 * token sees every merchant (the token is answered once, only its SHA-256 is kept), listed without
 * their secret, revoked at once (the guard reads the table on every request). The configured
 * tokens of ADMIN_TOKENS are not listed here and are revoked by removing them from it.
 */
@ApiTags('admin')
@ApiBearerAuth()
@ApiUnauthorizedResponse({
  description: 'no, unknown or revoked bearer token',
  schema: errorSchema,
})
@ApiForbiddenResponse({
  description: 'the token is not an approver’s, or is limited to some merchants',
  schema: errorSchema,
})
@UseGuards(AdminAuthGuard)
@RequiresRole('approver')
@RequiresAllMerchants()
@Controller('admin/tokens')
export class AdminTokensController {
  constructor(private readonly tokens: AdminTokenService) {}

  @Get()
  @ApiOperation({ summary: 'The stored admin tokens, newest first (never the token or its hash)' })
  @ApiOkResponse({ schema: { type: 'array', items: listingSchema } })
  list(): Promise<AdminTokenListing[]> {
    return this.tokens.list();
  }

  @Post()
  @HttpCode(201)
  @ApiOperation({
    summary: 'Create a token: the answer carries it once; only its SHA-256 is stored',
  })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['name', 'role', 'scope'],
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 128, description: 'the person' },
        role: { type: 'string', enum: [...ADMIN_ROLES] },
        scope: scopeSchema,
      },
    },
  })
  @ApiCreatedResponse({
    schema: {
      ...listingSchema,
      properties: { ...listingSchema.properties, token: { type: 'string' } },
    },
  })
  @ApiBadRequestResponse({ description: 'invalid body', schema: errorSchema })
  create(
    @Body() body: unknown,
    @Req() request: AdminRequest,
  ): Promise<AdminTokenListing & { token: string }> {
    return this.tokens.create(principalOf(request), parsed(CreateTokenBody, body));
  }

  @Post(':id/revoke')
  @HttpCode(200)
  @ApiOperation({ summary: 'Revoke a stored token: refused from now on' })
  @ApiParam({ name: 'id', type: String, format: 'uuid', required: true })
  @ApiOkResponse({
    schema: {
      type: 'object',
      properties: { id: { type: 'string' }, revoked: { type: 'boolean' } },
    },
  })
  @ApiNotFoundResponse({ description: 'no such stored token', schema: errorSchema })
  @ApiConflictResponse({ description: 'already revoked', schema: errorSchema })
  async revoke(
    @Param('id', new ParseUUIDPipe()) id: string,
    @Req() request: AdminRequest,
  ): Promise<{ id: string; revoked: true }> {
    const result = await this.tokens.revoke(principalOf(request), id);
    if (result === 'not-found') {
      throw new NotFoundException({ code: 'TOKEN_NOT_FOUND', message: `no stored token ${id}` });
    }
    if (result === 'already-revoked') {
      throw new ConflictException({ code: 'TOKEN_REVOKED', message: `token ${id} is revoked` });
    }
    return { id, revoked: true };
  }
}
