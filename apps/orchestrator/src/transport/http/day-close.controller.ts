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

/** What the API answers of a close: its day-closed event, who closed it, and whether just now. */
function view(close: DayClose) {
  return { ...close.event, closedBy: close.closedBy, fresh: close.fresh };
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
  constructor(private readonly days: DayCloseService) {}

  @Post(':day/close')
  @HttpCode(200)
  @RequiresRole('operator')
  @ApiOperation({
    summary:
      'Close a day: per merchant, the count and sum of its money events per type and currency and the last merchantSeq, published as day-closed (once: a closed day answers what it published)',
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
      },
    },
  })
  @ApiOkResponse({
    description:
      '[{type, closeId, merchant, day, timeZone, from, to, totals: [{eventType, currency, count, sumMinor}], count, lastMerchantSeq, occurredAt, closedBy, fresh}]',
  })
  @ApiBadRequestResponse({ description: 'day is not YYYY-MM-DD, endpointId not digits' })
  @ApiConflictResponse({ description: "DAY_NOT_OVER: the day is not over in the merchant's zone" })
  async close(
    @Param('day') day: string,
    @Body() body: { endpointId?: unknown } | undefined,
    @Req() request: AdminRequest,
  ) {
    const d = dayParam(day);
    const one = endpointParam(body?.endpointId);
    const endpoints = one === undefined ? await this.days.endpoints() : [one];
    const by = principalOf(request).name;
    try {
      const closes: DayClose[] = [];
      for (const endpointId of endpoints) closes.push(await this.days.close(endpointId, d, by));
      return closes.map(view);
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
    return (await this.days.ofDay(dayParam(day), endpointParam(endpointId))).map(view);
  }
}
