import { Controller, Inject, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ApiReply, plain } from '../../application/sandbox-api';
import { Sandbox } from '../../application/sandbox';
import { SandboxConfig } from '../../config';
import { headerMap, readBody } from './body';
import { SANDBOX, SANDBOX_CONFIG } from './tokens';

/** `POST [/<prefix>[/<prefix>]]/api/...`: hands the raw request to the sandbox API. */
@Controller()
export class ApiController {
  constructor(
    @Inject(SANDBOX) private readonly sandbox: Sandbox,
    @Inject(SANDBOX_CONFIG) private readonly config: SandboxConfig,
  ) {}

  @Post(['api/*rest', ':p1/api/*rest', ':p1/:p2/api/*rest'])
  async handle(@Req() req: Request, @Res() res: Response): Promise<void> {
    const body = await readBody(req, this.config.http.bodyLimitBytes);
    if (body === 'too-large') {
      res.setHeader('Connection', 'close');
      send(res, plain(413, `request body larger than ${this.config.http.bodyLimitBytes} bytes`));
      return;
    }
    const url = new URL(req.originalUrl, 'http://sandbox.invalid');
    const reply = await this.sandbox.api.handle({
      path: url.pathname,
      query: url.search.replace(/^\?/, ''),
      headers: headerMap(req),
      body,
    });
    send(res, reply);
  }
}

export function send(res: Response, reply: ApiReply): void {
  if (reply.kind === 'drop') {
    // The money moved; the reply is lost (fault injection).
    res.socket?.destroy();
    return;
  }
  res.status(reply.status).setHeader('Content-Type', reply.contentType).send(reply.body);
}
