import {
  Controller,
  Get,
  HttpCode,
  HttpStatus,
  Inject,
  Param,
  Post,
  Req,
  UseFilters,
} from '@nestjs/common';
import type { Request } from 'express';
import {
  CallbackIngestService,
  type IngestOutcome,
} from '../../application/callback-ingest.service';
import { CALLBACK_INGEST_CONFIG, type CallbackIngestConfig } from '../../config';
import { BrokerUnavailableFilter } from './broker-unavailable.filter';
import { BrokerUnavailableException, edgeError, unknownEndpoint } from './edge-errors';
import { ingestHttpRequest } from './ingest-http-request';

export interface CallbackAccepted {
  readonly status: 'accepted';
  readonly notificationId: string;
}

const STATUS_BY_CODE: Record<string, HttpStatus> = {
  'missing-control': HttpStatus.BAD_REQUEST,
  'malformed-callback': HttpStatus.BAD_REQUEST,
  'unknown-merchant-order': HttpStatus.BAD_REQUEST,
  'checksum-mismatch': HttpStatus.FORBIDDEN,
};

/**
 * The gateway's server callback (`server_callback_url`, facts §6): GET with the parameters in
 * the query, or POST form-encoded. 200 only once the broker acknowledged the verified
 * notification; anything else makes the gateway retry (30 times over 14 days).
 */
@Controller('callbacks/gateway')
@UseFilters(BrokerUnavailableFilter)
export class GatewayCallbackController {
  constructor(
    private readonly ingest: CallbackIngestService,
    @Inject(CALLBACK_INGEST_CONFIG) private readonly config: CallbackIngestConfig,
  ) {}

  @Get(':endpointId')
  @HttpCode(HttpStatus.OK)
  get(@Param('endpointId') endpointId: string, @Req() req: Request): Promise<CallbackAccepted> {
    return this.handle(endpointId, req);
  }

  @Post(':endpointId')
  @HttpCode(HttpStatus.OK)
  post(@Param('endpointId') endpointId: string, @Req() req: Request): Promise<CallbackAccepted> {
    return this.handle(endpointId, req);
  }

  private async handle(endpointId: string, req: Request): Promise<CallbackAccepted> {
    const outcome = await ingestHttpRequest(
      this.ingest,
      this.config.http,
      'server-callback',
      endpointId,
      req,
    );
    return toHttp(outcome);
  }
}

function toHttp(outcome: IngestOutcome): CallbackAccepted {
  switch (outcome.kind) {
    case 'accepted':
      return { status: 'accepted', notificationId: outcome.notificationId };
    case 'unavailable':
      throw new BrokerUnavailableException();
    case 'unknown-endpoint':
      throw unknownEndpoint();
    case 'rejected':
      throw edgeError(
        STATUS_BY_CODE[outcome.code] ?? HttpStatus.BAD_REQUEST,
        outcome.code,
        outcome.message,
      );
    default: {
      const exhaustive: never = outcome;
      return exhaustive;
    }
  }
}
