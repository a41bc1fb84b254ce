import {
  BadRequestException,
  Controller,
  Get,
  NotFoundException,
  Param,
  ParseUUIDPipe,
  Query,
  UseGuards,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { ReconciliationRunDetail, ReconciliationRunSummary } from '@payments/contracts';
import { ReconciliationRunsQuery } from '../../application/queries/reconciliation-runs.query';
import { AdminAuthGuard, RequiresAllMerchants } from './admin-auth.guard';

/** Reconciliation runs and what they found, for the console (any admin role may read them). */
@ApiTags('admin')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'no or unknown bearer token' })
@UseGuards(AdminAuthGuard)
@RequiresAllMerchants()
@Controller('admin/reconciliation/runs')
export class ReconciliationRunsController {
  constructor(private readonly runs: ReconciliationRunsQuery) {}

  @Get()
  @ApiOperation({ summary: 'The latest reconciliation runs, newest first, with their counts' })
  @ApiQuery({ name: 'limit', type: String, required: false, description: '1-200, default 20' })
  @ApiOkResponse({
    description:
      '[{id, trigger, requestedBy, from, to, endpointId, status, startedAt, completedAt, checked, mismatched}]',
  })
  @ApiBadRequestResponse({ description: 'limit is not 1 to 200' })
  latest(@Query('limit') limit?: string): Promise<ReconciliationRunSummary[]> {
    const n = limit === undefined ? 20 : Number(limit);
    if (!/^\d{1,3}$/.test(limit ?? '20') || n < 1 || n > 200) {
      throw new BadRequestException({ code: 'BAD_REQUEST', message: 'limit: 1 to 200' });
    }
    return this.runs.latest(n);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One run with the operations it found differing (up to 500)' })
  @ApiParam({ name: 'id', type: String, format: 'uuid', required: true })
  @ApiOkResponse({ description: '{run, mismatches: [{sagaId, flow, endpointId, kind}]}' })
  @ApiNotFoundResponse({ description: 'no such run' })
  async detail(@Param('id', new ParseUUIDPipe()) id: string): Promise<ReconciliationRunDetail> {
    const detail = await this.runs.detail(id);
    if (detail === undefined) {
      throw new NotFoundException({
        code: 'RUN_NOT_FOUND',
        message: `no reconciliation run ${id}`,
      });
    }
    return detail;
  }
}
