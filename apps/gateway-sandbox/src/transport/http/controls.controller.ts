import { Controller, Delete, Get, Inject, Param, Post, Query, Req, Res } from '@nestjs/common';
import type { Request, Response } from 'express';
import { ControlReply } from '../../application/controls';
import { Sandbox } from '../../application/sandbox';
import { SandboxConfig } from '../../config';
import { readBody } from './body';
import { SANDBOX, SANDBOX_CONFIG } from './tokens';

/** Test-only routes; the module registers this controller only with SANDBOX_TEST_CONTROLS=true. */
@Controller('_sandbox')
export class ControlsController {
  constructor(
    @Inject(SANDBOX) private readonly sandbox: Sandbox,
    @Inject(SANDBOX_CONFIG) private readonly config: SandboxConfig,
  ) {}

  @Get('ledger')
  ledger(
    @Query('login') login: string | undefined,
    @Query('clientOrderId') id: string | undefined,
    @Res() res: Response,
  ): void {
    reply(res, this.sandbox.controls.ledgerView(login, id));
  }

  @Get('faults')
  faults(@Res() res: Response): void {
    reply(res, this.sandbox.controls.listFaults());
  }

  @Post('faults')
  async addFault(@Req() req: Request, @Res() res: Response): Promise<void> {
    const body = await this.json(req, res);
    if (body !== NO_BODY) reply(res, this.sandbox.controls.addFault(body));
  }

  @Delete('faults')
  clearFaults(@Res() res: Response): void {
    reply(res, this.sandbox.controls.removeFault());
  }

  @Delete('faults/:id')
  removeFault(@Param('id') id: string, @Res() res: Response): void {
    reply(res, this.sandbox.controls.removeFault(id));
  }

  @Get('clock')
  clock(@Res() res: Response): void {
    reply(res, this.sandbox.controls.clockView());
  }

  @Post('clock/advance')
  async advance(@Req() req: Request, @Res() res: Response): Promise<void> {
    const body = await this.json(req, res);
    if (body !== NO_BODY) reply(res, this.sandbox.controls.advance(body));
  }

  @Get('settings')
  settings(@Res() res: Response): void {
    reply(res, this.sandbox.controls.settings());
  }

  @Post('settings')
  async changeSettings(@Req() req: Request, @Res() res: Response): Promise<void> {
    const body = await this.json(req, res);
    if (body !== NO_BODY) reply(res, this.sandbox.controls.changeSettings(body));
  }

  @Get('callbacks')
  callbacks(@Query('clientOrderId') clientOrderId: string | undefined, @Res() res: Response): void {
    reply(res, this.sandbox.controls.callbacks(clientOrderId));
  }

  @Get('orders')
  orders(@Query('clientOrderId') clientOrderId: string | undefined, @Res() res: Response): void {
    reply(res, this.sandbox.controls.orders(clientOrderId));
  }

  @Get('orders/:orderId')
  order(@Param('orderId') orderId: string, @Res() res: Response): void {
    reply(res, this.sandbox.controls.order(orderId));
  }

  @Post('orders/:orderId/resolve')
  async resolve(
    @Param('orderId') orderId: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const body = await this.json(req, res);
    if (body !== NO_BODY) reply(res, this.sandbox.controls.resolve(orderId, body));
  }

  @Post('orders/:orderId/override')
  async override(
    @Param('orderId') orderId: string,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    const body = await this.json(req, res);
    if (body !== NO_BODY) reply(res, this.sandbox.controls.override(orderId, body));
  }

  @Post('orders/:orderId/charge-again')
  chargeAgain(@Param('orderId') orderId: string, @Res() res: Response): void {
    reply(res, this.sandbox.controls.chargeAgain(orderId));
  }

  @Get('concurrency')
  concurrency(@Res() res: Response): void {
    reply(res, this.sandbox.controls.concurrencyView());
  }

  @Delete('concurrency')
  resetConcurrency(@Res() res: Response): void {
    reply(res, this.sandbox.controls.resetConcurrency());
  }

  @Get('recurring')
  recurring(@Query('login') login: string | undefined, @Res() res: Response): void {
    reply(res, this.sandbox.controls.recurring(login));
  }

  @Post('reset')
  reset(@Res() res: Response): void {
    reply(res, this.sandbox.controls.reset());
  }

  private async json(req: Request, res: Response): Promise<unknown> {
    const body = await readBody(req, this.config.http.bodyLimitBytes);
    if (body === 'too-large') {
      reply(res, { status: 413, body: { error: 'body too large' } });
      return NO_BODY;
    }
    if (body.length === 0) return {};
    try {
      return JSON.parse(body.toString('utf8')) as unknown;
    } catch {
      reply(res, { status: 400, body: { error: 'body is not JSON' } });
      return NO_BODY;
    }
  }
}

const NO_BODY = Symbol('no body');

function reply(res: Response, r: ControlReply): void {
  res.status(r.status).json(r.body);
}
