import {
  Controller,
  Get,
  HttpStatus,
  Inject,
  Param,
  Post,
  Redirect,
  Req,
  UseFilters,
} from '@nestjs/common';
import type { Request } from 'express';
import {
  CallbackIngestService,
  type IngestOutcome,
} from '../../application/callback-ingest.service';
import { CALLBACK_INGEST_CONFIG, type CallbackIngestConfig } from '../../config';
import { BrowserErrorPageFilter } from './browser-error-page.filter';
import { edgeError, unknownEndpoint } from './edge-errors';
import { ingestHttpRequest } from './ingest-http-request';

export interface RedirectTo {
  readonly url: string;
  readonly statusCode: number;
}

/**
 * The payer's browser coming back to `redirect_url` (facts §5: POST with status, orderid,
 * merchant_order, control). Verified like a callback and published as a `browser-return`
 * notification — a hint the orchestrator confirms by a status query, never a final answer — or
 * as a status-check hint when it does not verify. The payer is always sent on (303) to the
 * merchant page, `?payment=<id>`, with `&result=unverified` when verification failed. Only a
 * request that names no payment at all gets a (minimal, HTML) error page.
 */
@Controller('return')
@UseFilters(BrowserErrorPageFilter)
export class BrowserReturnController {
  constructor(
    private readonly ingest: CallbackIngestService,
    @Inject(CALLBACK_INGEST_CONFIG) private readonly config: CallbackIngestConfig,
  ) {}

  @Get(':endpointId')
  @Redirect()
  get(@Param('endpointId') endpointId: string, @Req() req: Request): Promise<RedirectTo> {
    return this.handle(endpointId, req);
  }

  @Post(':endpointId')
  @Redirect()
  post(@Param('endpointId') endpointId: string, @Req() req: Request): Promise<RedirectTo> {
    return this.handle(endpointId, req);
  }

  private async handle(endpointId: string, req: Request): Promise<RedirectTo> {
    const outcome = await ingestHttpRequest(
      this.ingest,
      this.config.http,
      'browser-return',
      endpointId,
      req,
    );
    return this.redirectFor(outcome);
  }

  private redirectFor(outcome: IngestOutcome): RedirectTo {
    switch (outcome.kind) {
      case 'accepted':
      case 'unavailable':
        // Not recorded is no reason to strand the payer: the orchestrator polls the status.
        return this.to(outcome.paymentId, false);
      case 'rejected':
        if (outcome.paymentId === undefined) {
          throw edgeError(
            HttpStatus.BAD_REQUEST,
            outcome.code,
            'the payment return names no payment',
          );
        }
        return this.to(outcome.paymentId, true);
      case 'unknown-endpoint':
        throw unknownEndpoint();
      default: {
        const exhaustive: never = outcome;
        return exhaustive;
      }
    }
  }

  private to(paymentId: string, unverified: boolean): RedirectTo {
    const url = new URL(this.config.callbacks.merchantReturnUrl);
    url.searchParams.set('payment', paymentId);
    if (unverified) url.searchParams.set('result', 'unverified');
    return { url: url.toString(), statusCode: HttpStatus.SEE_OTHER };
  }
}
