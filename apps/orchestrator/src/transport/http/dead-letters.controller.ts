import {
  Body,
  ConflictException,
  Controller,
  Get,
  HttpCode,
  NotFoundException,
  Post,
  Query,
  Req,
  UseGuards,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiBody,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import { z } from 'zod';
import {
  type DeadLetterPage,
  DeadLetterService,
} from '../../application/dead-letters/dead-letter.service';
import {
  AdminAuthGuard,
  type AdminRequest,
  RequiresRole,
  RequiresAllMerchants,
} from './admin-auth.guard';
import { parsed } from './admin.controller';

/** GET /admin/dead-letters query string. */
export const DeadLetterQuery = z.strictObject({
  limit: z
    .string()
    .regex(/^\d{1,3}$/, 'a whole number')
    .transform(Number)
    .pipe(z.number().int().min(1).max(500))
    .optional(),
});

/** POST /admin/dead-letters/replay body: which dead letter, and why. */
export const ReplayBody = z.strictObject({
  at: z.string().min(1).max(300),
  reason: z.string().trim().min(1, 'say why').max(1024),
});

const letterSchema = {
  type: 'object',
  description: 'where, when and why — never the record value (only its size)',
  properties: {
    at: { type: 'string', description: '<dlq topic>/<partition>/<offset>' },
    dlqTopic: { type: 'string' },
    partition: { type: 'integer' },
    offset: { type: 'string' },
    time: { type: 'string' },
    key: { type: 'string', nullable: true },
    reason: { type: 'string', description: 'dlq-reason header' },
    error: { type: 'string', description: 'dlq-error header (card data scrubbed)' },
    originalTopic: { type: 'string', nullable: true },
    originalPartition: { type: 'string', nullable: true },
    originalOffset: { type: 'string', nullable: true },
    consumerGroup: { type: 'string', nullable: true },
    replayedFrom: { type: 'string', nullable: true },
    bytes: { type: 'integer' },
  },
};

/**
 * The dead letters of every `*.dlq` topic, read by any admin role, and replayed one at a time by an
 * operator — by the same rules as `payments dlq replay`, audited in `dead_letter_replays`.
 */
@ApiTags('admin')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'no or unknown bearer token' })
@UseGuards(AdminAuthGuard)
@RequiresAllMerchants()
@Controller('admin/dead-letters')
export class DeadLettersController {
  constructor(private readonly deadLetters: DeadLetterService) {}

  @Get()
  @ApiOperation({ summary: 'The dead letters on every *.dlq topic, newest first' })
  @ApiQuery({ name: 'limit', type: String, required: false, description: '1-500, default 100' })
  @ApiOkResponse({
    schema: {
      type: 'object',
      properties: {
        items: { type: 'array', items: letterSchema },
        total: { type: 'integer' },
        topics: { type: 'array', items: { type: 'string' } },
      },
    },
  })
  @ApiBadRequestResponse({ description: 'limit is not 1 to 500' })
  list(@Query() query: unknown): Promise<DeadLetterPage> {
    const { limit } = parsed(DeadLetterQuery, query);
    return this.deadLetters.list(limit ?? 100);
  }

  @Post('replay')
  @HttpCode(200)
  @RequiresRole('operator')
  @ApiOperation({
    summary:
      'Replay one dead letter to its original topic (key, value, original headers and dlq-replayed-from), audited',
  })
  @ApiBody({
    schema: {
      type: 'object',
      required: ['at', 'reason'],
      properties: {
        at: { type: 'string', description: '<dlq topic>/<partition>/<offset>' },
        reason: { type: 'string', minLength: 1, maxLength: 1024 },
      },
    },
  })
  @ApiOkResponse({
    description: 'the broker acknowledged the replayed record; the replay is audited',
    schema: {
      type: 'object',
      properties: {
        auditId: { type: 'string', format: 'uuid' },
        deadLetter: { type: 'string' },
        replayedTo: { type: 'string' },
        key: { type: 'string', nullable: true },
      },
    },
  })
  @ApiBadRequestResponse({ description: 'invalid body' })
  @ApiForbiddenResponse({ description: 'the token is a viewer’s' })
  @ApiNotFoundResponse({ description: 'no such dead letter' })
  @ApiConflictResponse({ description: 'the dead letter cannot go back (no original topic)' })
  async replay(
    @Body() body: unknown,
    @Req() request: AdminRequest,
  ): Promise<{ auditId: string; deadLetter: string; replayedTo: string; key: string | null }> {
    const { at, reason } = parsed(ReplayBody, body);
    const principal = request.adminPrincipal;
    if (principal === undefined) throw new Error('AdminAuthGuard did not run');
    const result = await this.deadLetters.replay(principal, at, reason);
    switch (result.kind) {
      case 'replayed':
        return {
          auditId: result.auditId,
          deadLetter: result.deadLetter,
          replayedTo: result.replayedTo,
          key: result.key,
        };
      case 'not-found':
        throw new NotFoundException({
          code: 'DEAD_LETTER_NOT_FOUND',
          message: `no dead letter ${at}`,
        });
      case 'refused':
        throw new ConflictException({ code: 'REPLAY_REFUSED', message: result.message });
      default: {
        const never: never = result;
        throw new Error(`unhandled result ${JSON.stringify(never)}`);
      }
    }
  }
}
