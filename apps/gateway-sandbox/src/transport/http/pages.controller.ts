import { All, Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { Sandbox } from '../../application/sandbox';
import { PageResult } from '../../domain/engine';
import { parseForm } from '../../domain/form';
import { SandboxConfig } from '../../config';
import { readBody } from './body';
import { SANDBOX, SANDBOX_CONFIG } from './tokens';

/** Pages for the payer's browser: hosted payment pages, 3DS method and ACS challenge. */
@Controller()
export class PagesController {
  constructor(
    @Inject(SANDBOX) private readonly sandbox: Sandbox,
    @Inject(SANDBOX_CONFIG) private readonly config: SandboxConfig,
  ) {}

  @Get('hpp/:token')
  hostedPage(@Param('token') token: string, @Res() res: Response): void {
    render(res, this.sandbox.engine.hostedPage(token));
  }

  @Post('hpp/:token')
  async hostedSubmit(
    @Param('token') token: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const fields = await this.form(req, res);
    if (fields) render(res, this.sandbox.engine.hostedSubmit(token, fields));
  }

  @Get('3ds-method/:token')
  method(@Param('token') token: string, @Res() res: Response): void {
    render(res, this.sandbox.engine.methodPage(token));
  }

  @All('acs/:token')
  acs(@Param('token') token: string, @Res() res: Response): void {
    render(res, this.sandbox.engine.acsPage(token));
  }

  @Post('acs/:token/submit')
  async acsSubmit(
    @Param('token') token: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const fields = await this.form(req, res);
    if (fields) render(res, this.sandbox.engine.acsSubmit(token, fields));
  }

  private async form(
    req: Request,
    res: Response,
  ): Promise<ReadonlyMap<string, string> | undefined> {
    const body = await readBody(req, this.config.http.bodyLimitBytes);
    if (body === 'too-large') {
      res.setHeader('Connection', 'close');
      res.status(413).type('text/plain').send('request body too large');
      return undefined;
    }
    const parsed = parseForm(body.toString('utf8'));
    if (!parsed.ok) {
      res.status(400).type('text/plain').send(parsed.reason);
      return undefined;
    }
    return parsed.body.fields;
  }
}

function render(res: Response, page: PageResult): void {
  res.setHeader('Cache-Control', 'no-store');
  if (page.kind === 'redirect') {
    res.redirect(303, page.location);
    return;
  }
  res.status(page.status).type('text/html; charset=utf-8').send(page.html);
}
