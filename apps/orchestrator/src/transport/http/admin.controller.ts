import {
  BadRequestException,
  Body,
  ConflictException,
  Controller,
  Get,
  HttpCode,
  NotFoundException,
  Param,
  ParseUUIDPipe,
  Post,
  Query,
  Req,
  UseGuards,
} from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { ADMIN_ACTIONS, ADMIN_ROLES, AdminAction, type AdminIdentity } from '@payments/contracts';
import { z } from 'zod';
import { AdminActionService } from '../../application/admin/admin-action.service';
import { AdminAuthGuard, type AdminRequest, principalOf, RequiresRole } from './admin-auth.guard';
import { scopedEndpoints } from '../../domain/admin/admin-tokens';
import {
  AdminQueryService,
  BadCursorError,
  type SagaDetail,
  type SagaPage,
} from '../../application/queries/admin-query.service';

const count = z
  .string()
  .regex(/^\d{1,15}$/, 'a whole number')
  .transform(Number);
const time = z
  .string()
  .refine((v) => !Number.isNaN(Date.parse(v)), 'an ISO 8601 time')
  .transform((v) => new Date(v));

/** GET /admin/sagas query string; every filter optional. */
export const SagaSearchQuery = z.strictObject({
  flow: z.string().min(1).max(64).optional(),
  status: z.string().min(1).max(64).optional(),
  endpoint: z
    .string()
    .regex(/^\d{1,19}$/, 'a gateway endpoint id')
    .optional(),
  merchantOrderId: z.string().min(1).max(128).optional(),
  from: time.optional(),
  to: time.optional(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, 'an ISO 4217 code')
    .optional(),
  minAmount: count.optional(),
  maxAmount: count.optional(),
  unknownOlderThanSeconds: count.optional(),
  limit: count.pipe(z.number().int().min(1).max(200)).optional(),
  cursor: z.string().min(1).max(512).optional(),
});

/** POST /admin/sagas/:id/actions/:action body. */
export const ActionBody = z.strictObject({
  reason: z.string().trim().min(1, 'say why').max(1024),
});

export function parsed<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value ?? {});
  if (!result.success) {
    throw new BadRequestException({
      code: 'BAD_REQUEST',
      message: result.error.issues.map((i) => `${i.path.join('.') || '$'}: ${i.message}`),
    });
  }
  return result.data;
}

export const scopeSchema = {
  description: '"all" (every merchant) or {"endpoints": ["<endpoint id>", …]}',
  oneOf: [
    { type: 'string', enum: ['all'] },
    {
      type: 'object',
      required: ['endpoints'],
      properties: { endpoints: { type: 'array', items: { type: 'string' }, minItems: 1 } },
    },
  ],
};

export const errorSchema = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: {
        code: { type: 'string' },
        message: { type: 'string' },
        errorId: { type: 'string' },
      },
    },
  },
};

const summarySchema = {
  type: 'object',
  properties: {
    id: { type: 'string', format: 'uuid' },
    flow: { type: 'string' },
    kind: { type: 'string', nullable: true },
    status: { type: 'string' },
    endpointId: { type: 'string' },
    merchantOrderId: { type: 'string', nullable: true },
    version: { type: 'integer' },
    amount: {
      type: 'object',
      nullable: true,
      properties: { minor: { type: 'integer' }, currency: { type: 'string' } },
    },
    unknownSince: { type: 'string', format: 'date-time', nullable: true },
    approvalDeadline: { type: 'string', format: 'date-time', nullable: true },
    createdAt: { type: 'string', format: 'date-time' },
    updatedAt: { type: 'string', format: 'date-time' },
  },
};

/**
 * The operators' admin API, mounted when ADMIN_TOKENS names at least one token: search
 * sagas of every flow, read one with its history, events, gateway requests and audit, and act on
 * it — every action becomes an ordinary command on Kafka, audited in the same transaction. Every
 * read and action is limited to the token's scope: another merchant's saga is never listed and
 * answers 404, as a saga that does not exist.
 */
@ApiTags('admin')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'no or unknown bearer token', schema: errorSchema })
@UseGuards(AdminAuthGuard)
@Controller('admin')
export class AdminController {
  constructor(
    private readonly queries: AdminQueryService,
    private readonly actions: AdminActionService,
  ) {}

  @Get('whoami')
  @ApiOperation({
    summary:
      'Who the bearer token names, its role and its scope (a console shows only what the role may do, and which merchants it sees)',
  })
  @ApiOkResponse({
    schema: {
      type: 'object',
      properties: {
        name: { type: 'string' },
        role: { type: 'string', enum: [...ADMIN_ROLES] },
        scope: scopeSchema,
      },
    },
  })
  whoami(@Req() request: AdminRequest): AdminIdentity {
    const { name, role, scope } = principalOf(request);
    return { name, role, scope };
  }

  @Get('sagas')
  @ApiOperation({
    summary: "Search sagas (newest first, keyset pages), within the token's merchants",
  })
  @ApiQuery({
    name: 'flow',
    required: false,
    description: 'card-payment, payout, recurring-schedule, transfer, …',
  })
  @ApiQuery({ name: 'status', required: false })
  @ApiQuery({ name: 'endpoint', required: false, description: 'merchant endpoint id' })
  @ApiQuery({
    name: 'merchantOrderId',
    required: false,
    description: "the merchant's order id (client_orderid)",
  })
  @ApiQuery({ name: 'from', required: false, description: 'created at or after (ISO 8601)' })
  @ApiQuery({ name: 'to', required: false, description: 'created before (ISO 8601)' })
  @ApiQuery({ name: 'currency', required: false })
  @ApiQuery({ name: 'minAmount', required: false, description: 'minor units' })
  @ApiQuery({ name: 'maxAmount', required: false, description: 'minor units' })
  @ApiQuery({
    name: 'unknownOlderThanSeconds',
    required: false,
    description: 'outcome unknown for longer than this',
  })
  @ApiQuery({ name: 'limit', required: false, description: '1-200, default 50' })
  @ApiQuery({ name: 'cursor', required: false, description: 'nextCursor of the previous page' })
  @ApiOkResponse({
    schema: {
      type: 'object',
      properties: {
        items: { type: 'array', items: summarySchema },
        nextCursor: { type: 'string' },
      },
    },
  })
  @ApiBadRequestResponse({ description: 'a filter is invalid', schema: errorSchema })
  async search(@Query() query: unknown, @Req() request: AdminRequest): Promise<SagaPage> {
    const q = parsed(SagaSearchQuery, query);
    const endpoints = scopedEndpoints(principalOf(request).scope);
    try {
      return await this.queries.search({
        ...q,
        limit: q.limit ?? 50,
        ...(endpoints === undefined ? {} : { endpoints }),
      });
    } catch (error) {
      if (error instanceof BadCursorError) {
        throw new BadRequestException({ code: 'BAD_REQUEST', message: error.message });
      }
      throw error;
    }
  }

  @Get('sagas/:id')
  @ApiOperation({ summary: 'One saga: state, history, events, gateway requests, audit' })
  @ApiParam({ name: 'id', type: String, format: 'uuid', required: true })
  @ApiOkResponse({
    schema: {
      type: 'object',
      properties: {
        saga: summarySchema,
        money: {
          type: 'object',
          nullable: true,
          description: 'card payments: minor units; remaining = still charged or held',
          properties: {
            currency: { type: 'string' },
            authorized: { type: 'integer' },
            captured: { type: 'integer' },
            returned: { type: 'integer' },
            remaining: { type: 'integer' },
          },
        },
        actions: {
          type: 'array',
          items: { type: 'string', enum: [...ADMIN_ACTIONS] },
          description:
            "the actions this token may take on the saga now, derived from its state by its flow's own rules (none for a viewer)",
        },
        history: { type: 'array', items: { type: 'object' } },
        events: { type: 'array', items: { type: 'object' } },
        gatewayRequests: { type: 'array', items: { type: 'object' } },
        audit: { type: 'array', items: { type: 'object' } },
      },
    },
  })
  @ApiNotFoundResponse({
    description: "no such saga in the token's scope",
    schema: errorSchema,
  })
  async detail(
    @Param('id', new ParseUUIDPipe()) id: string,
    @Req() request: AdminRequest,
  ): Promise<SagaDetail> {
    const detail = await this.queries.detail(id, principalOf(request));
    if (detail === undefined) {
      throw new NotFoundException({ code: 'SAGA_NOT_FOUND', message: `no saga ${id}` });
    }
    return detail;
  }

  @Post('sagas/:id/actions/:action')
  @HttpCode(202)
  @RequiresRole('operator')
  @ApiOperation({
    summary: 'Act on a saga: the action is sent as a command through Kafka and audited',
    description:
      "refresh-status / resolve-unknown (card payments, payouts, transfers, schedules: ask the gateway about what is in flight; its answer decides; resolve-unknown only while an outcome is unknown), approve / reject (payouts), pause / resume / cancel (schedules). Only what the saga's state takes now (its `actions`): anything else is refused with 409 before any command exists. Four eyes: the approval of a payout above PAYOUT_FOUR_EYES_ABOVE_MINOR is recorded; payout-pay follows a second approval by another person with the approver role (the same person twice: 409 PAYOUT_SAME_APPROVER; a second approval without the role: 409 PAYOUT_APPROVER_ROLE_REQUIRED).",
  })
  @ApiParam({ name: 'id', type: String, format: 'uuid', required: true })
  @ApiParam({ name: 'action', type: String, enum: [...ADMIN_ACTIONS], required: true })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['reason'],
      properties: { reason: { type: 'string', minLength: 1, maxLength: 1024 } },
    },
  })
  @ApiAcceptedResponse({
    description: 'the command is enqueued with its audit',
    schema: {
      type: 'object',
      properties: {
        auditId: { type: 'string', format: 'uuid' },
        commandId: { type: 'string', format: 'uuid' },
        commandType: { type: 'string' },
      },
    },
  })
  @ApiBadRequestResponse({ description: 'unknown action or invalid body', schema: errorSchema })
  @ApiForbiddenResponse({ description: 'the token is a viewer’s', schema: errorSchema })
  @ApiNotFoundResponse({
    description: "no such saga in the token's scope",
    schema: errorSchema,
  })
  @ApiConflictResponse({
    description:
      'ACTION_NOT_APPLICABLE: the action does not apply to this saga’s flow; ACTION_NOT_ALLOWED_IN_STATE: the saga’s state does not take it now (the message gives the flow’s reason); PAYOUT_SAME_APPROVER, PAYOUT_APPROVER_ROLE_REQUIRED: four eyes',
    schema: errorSchema,
  })
  async act(
    @Param('id', new ParseUUIDPipe()) id: string,
    @Param('action') action: string,
    @Body() body: unknown,
    @Req() request: AdminRequest,
  ): Promise<{ auditId: string; commandId: string; commandType: string }> {
    const name = parsed(AdminAction, action);
    const { reason } = parsed(ActionBody, body);
    const result = await this.actions.act(principalOf(request), id, name, reason);
    switch (result.kind) {
      case 'accepted':
        return {
          auditId: result.auditId,
          commandId: result.commandId,
          commandType: result.commandType,
        };
      case 'not-found':
        throw new NotFoundException({ code: 'SAGA_NOT_FOUND', message: `no saga ${id}` });
      case 'not-applicable':
        throw new ConflictException({ code: 'ACTION_NOT_APPLICABLE', message: result.message });
      case 'not-allowed':
        throw new ConflictException({ code: result.code, message: result.message });
      case 'invalid':
        throw new BadRequestException({ code: 'BAD_REQUEST', message: result.message });
      default: {
        const never: never = result;
        throw new Error(`unhandled result ${JSON.stringify(never)}`);
      }
    }
  }
}
