import {
  BadRequestException,
  Body,
  ConflictException,
  Controller,
  Get,
  HttpCode,
  Param,
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
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import {
  type DayClose,
  DayCloseService,
  DayNotOverError,
} from '../../application/finance/day-close.service';
import { type CloseReport, DayTieOutService } from '../../application/finance/day-tie-out.service';
import { isDay } from '../../domain/journal';
import {
  AdminAuthGuard,
  type AdminRequest,
  principalOf,
  RequiresAllMerchants,
  RequiresRole,
} from './admin-auth.guard';

const ENDPOINT_ID = /^\d{1,19}$/;

function dayParam(day: string): string {
  if (!isDay(day))
    throw new BadRequestException({ code: 'BAD_REQUEST', message: 'day: YYYY-MM-DD' });
  return day;
}

function endpointParam(endpointId: unknown): string | undefined {
  if (endpointId === undefined || endpointId === null || endpointId === '') return undefined;
  if (typeof endpointId !== 'string' || !ENDPOINT_ID.test(endpointId))
    throw new BadRequestException({ code: 'BAD_REQUEST', message: 'endpointId: digits' });
  return endpointId;
}

/**
 * What the API answers of a close: its day-closed event, who closed it, whether just now, and the
 * latest version of its close report (the tie-out against the gateway; null before any).
 */
function view(close: DayClose, reports: readonly CloseReport[]) {
  const report = reports.find(
    (r) => r.endpointId === close.event.merchant.endpointId && r.day === close.event.day,
  );
  return { ...close.event, closedBy: close.closedBy, fresh: close.fresh, report: report ?? null };
}

function versionsParam(versions: unknown): 'latest' | 'all' {
  if (versions === undefined || versions === '' || versions === 'latest') return 'latest';
  if (versions === 'all') return 'all';
  throw new BadRequestException({ code: 'BAD_REQUEST', message: 'versions: latest or all' });
}

/**
 * Merchants' days (issue #35): close one (each merchant's day in its time zone; the scheduled close
 * does the same once a day ended plus DAY_CLOSE_GRACE_SECONDS) and read the closes.
 */
@ApiTags('admin')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'no or unknown bearer token' })
@UseGuards(AdminAuthGuard)
@RequiresAllMerchants()
@Controller('admin/days')
export class DayCloseController {
  constructor(
    private readonly days: DayCloseService,
    private readonly tieOut: DayTieOutService,
  ) {}

  @Post(':day/close')
  @HttpCode(200)
  @RequiresRole('operator')
  @ApiOperation({
    summary:
      'Close a day: per merchant, the count and sum of its money events per type and currency and the last merchantSeq, published as day-closed (once: a closed day answers what it published); starts the close report (the day reconciled against the gateway; `rerun`: its next version)',
  })
  @ApiParam({
    name: 'day',
    type: String,
    required: true,
    description: "YYYY-MM-DD, the merchant's calendar day",
  })
  @ApiBody({
    required: false,
    schema: {
      type: 'object',
      properties: {
        endpointId: {
          type: 'string',
          description: 'one merchant; none: every merchant with money events',
        },
        rerun: {
          type: 'boolean',
          description:
            'start the next version of the close report (unless one is reconciling); the older versions are kept',
        },
      },
    },
  })
  @ApiOkResponse({
    description:
      '[{type, closeId, merchant, day, timeZone, from, to, totals: [{eventType, currency, count, sumMinor}], count, lastMerchantSeq, occurredAt, closedBy, fresh, report}]; report: the latest close report version or null — {endpointId, day, version, runId, timeZone, from, to, state: reconciling | closed | open-with-exceptions, trigger, requestedBy, startedAt, completedAt?, totals?: [{currency, type, count, oursMinor, gatewayMinor, differenceMinor}], lines?: [{sagaId, flow, requestId?, operation?, type, currency, oursMinor, gatewayMinor, differenceMinor, status, verdict?, caseId?}], exceptions?: [{kind, sagaId, flow?, requestId?, operation?, currency?, minor?, verdict?, caseId?, concern?}]}',
  })
  @ApiBadRequestResponse({ description: 'day is not YYYY-MM-DD, endpointId not digits' })
  @ApiConflictResponse({ description: "DAY_NOT_OVER: the day is not over in the merchant's zone" })
  async close(
    @Param('day') day: string,
    @Body() body: { endpointId?: unknown; rerun?: unknown } | undefined,
    @Req() request: AdminRequest,
  ) {
    const d = dayParam(day);
    const one = endpointParam(body?.endpointId);
    if (body?.rerun !== undefined && typeof body.rerun !== 'boolean')
      throw new BadRequestException({ code: 'BAD_REQUEST', message: 'rerun: a boolean' });
    const endpoints = one === undefined ? await this.days.endpoints() : [one];
    const by = principalOf(request).name;
    try {
      const closes: DayClose[] = [];
      for (const endpointId of endpoints) {
        const close = await this.days.close(endpointId, d, by);
        if (body?.rerun === true) await this.tieOut.startNext(close.event, 'rerun', by);
        else await this.tieOut.startFirst(close.event, by);
        closes.push(close);
      }
      const reports = await this.tieOut.ofDay(d, one, 'latest');
      return closes.map((c) => view(c, reports));
    } catch (error) {
      if (error instanceof DayNotOverError)
        throw new ConflictException({ code: 'DAY_NOT_OVER', message: error.message });
      throw error;
    }
  }

  @Get(':day')
  @ApiOperation({ summary: "A day's closes (every merchant, or one)" })
  @ApiParam({ name: 'day', type: String, required: true, description: 'YYYY-MM-DD' })
  @ApiQuery({ name: 'endpointId', type: String, required: false })
  @ApiOkResponse({ description: 'the stored closes, as POST answers them' })
  @ApiBadRequestResponse({ description: 'day is not YYYY-MM-DD, endpointId not digits' })
  async ofDay(@Param('day') day: string, @Query('endpointId') endpointId?: string) {
    const d = dayParam(day);
    const one = endpointParam(endpointId);
    const reports = await this.tieOut.ofDay(d, one, 'latest');
    return (await this.days.ofDay(d, one)).map((c) => view(c, reports));
  }

  @Get(':day/reports')
  @ApiOperation({
    summary:
      "A day's close reports (the tie-out against the gateway): the latest version per merchant, or every version (versions=all)",
  })
  @ApiParam({ name: 'day', type: String, required: true, description: 'YYYY-MM-DD' })
  @ApiQuery({ name: 'endpointId', type: String, required: false })
  @ApiQuery({ name: 'versions', enum: ['latest', 'all'], required: false })
  @ApiOkResponse({ description: "the close reports, each as a close's `report` field" })
  @ApiBadRequestResponse({ description: 'day is not YYYY-MM-DD, endpointId not digits' })
  async reports(
    @Param('day') day: string,
    @Query('endpointId') endpointId?: string,
    @Query('versions') versions?: string,
  ) {
    return this.tieOut.ofDay(dayParam(day), endpointParam(endpointId), versionsParam(versions));
  }
}
