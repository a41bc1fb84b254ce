import {
  BadRequestException,
  Controller,
  Get,
  Query,
  Req,
  Res,
  ServiceUnavailableException,
  UseGuards,
} from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiBearerAuth,
  ApiOkResponse,
  ApiOperation,
  ApiProduces,
  ApiQuery,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { LiveEvent, LiveMinutes } from '@payments/contracts';
import type { Request, Response } from 'express';
import { LiveFeed } from '../../application/live/live-feed.service';
import { AdminAuthGuard, RequiresAllMerchants } from './admin-auth.guard';

/** A comment line this often keeps proxies from closing an idle stream. */
const KEEPALIVE_MS = 15_000;

/** One server-sent event (the data is one line of JSON: no newline can split it). */
export function sseFrame(event: string, data: unknown, id?: string): string {
  return `${id === undefined ? '' : `id: ${id}\n`}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The outcome events as they happen (server-sent events) and their counts per minute, for the
 * console's Watch page. Same tokens and roles as the rest of the admin API (viewers may watch).
 */
@ApiTags('admin')
@ApiBearerAuth()
@ApiUnauthorizedResponse({ description: 'no or unknown bearer token' })
@UseGuards(AdminAuthGuard)
@RequiresAllMerchants()
@Controller('admin/live')
export class LiveController {
  constructor(private readonly feed: LiveFeed) {}

  @Get('events')
  @ApiOperation({
    summary: 'The outcome events of payments.events.v1 as they are published (text/event-stream)',
    description:
      'First `event: ready`, then one `event: outcome` per event: {id, type, sagaId, version, occurredAt, amount, moneyMoved} (no other field of the event), and a comment line every 15 s. Events published while no stream is open are not replayed.',
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: 'the stream' })
  @ApiServiceUnavailableResponse({ description: 'this replica serves its maximum of streams' })
  events(@Req() request: Request, @Res() response: Response): void {
    let stop: (() => void) | undefined;
    const write = (event: LiveEvent) => response.write(sseFrame('outcome', event, event.id));
    stop = this.feed.listen(write);
    if (stop === undefined) {
      throw new ServiceUnavailableException({
        code: 'TOO_MANY_STREAMS',
        message: 'this replica serves its maximum of live streams; try again later',
      });
    }
    response.status(200);
    response.setHeader('Content-Type', 'text/event-stream; charset=utf-8');
    response.setHeader('Cache-Control', 'no-store');
    response.setHeader('X-Accel-Buffering', 'no');
    response.flushHeaders();
    response.write(sseFrame('ready', {}));
    const keepalive = setInterval(() => response.write(': keepalive\n\n'), KEEPALIVE_MS);
    request.on('close', () => {
      clearInterval(keepalive);
      stop?.();
      stop = undefined;
    });
  }

  @Get('minutes')
  @ApiOperation({
    summary: 'Events and money moved per minute (minor units by currency), oldest first',
  })
  @ApiQuery({ name: 'minutes', type: String, required: false, description: '1-60, default 30' })
  @ApiOkResponse({ description: '{since, minutes: [{minute, events, moved}]}' })
  @ApiBadRequestResponse({ description: 'minutes is not 1 to 60' })
  minutes(@Query('minutes') minutes?: string): LiveMinutes {
    const n = minutes === undefined ? 30 : Number(minutes);
    if (!/^\d{1,2}$/.test(minutes ?? '30') || n < 1 || n > 60) {
      throw new BadRequestException({ code: 'BAD_REQUEST', message: 'minutes: 1 to 60' });
    }
    return this.feed.minutes(new Date(), n);
  }
}
