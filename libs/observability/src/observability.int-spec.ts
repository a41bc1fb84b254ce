import {
  Controller,
  Get,
  HttpException,
  HttpStatus,
  Injectable,
  INestApplication,
} from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { Logger, LoggingModule, PinoLogger, currentCorrelationId } from '@payments/logging';
import { HealthCheck } from './health-check';
import { ErrorBody, HttpErrorFilter } from './http-error.filter';
import { ObservabilityModule } from './observability.module';
import { provideHealthChecks } from './provide-health-checks';

const PAN = '4111111111111111';

interface HealthBody {
  status: string;
  info: Record<string, { status: string }>;
  error: Record<string, { status: string; message?: string }>;
}

async function health(res: Response): Promise<HealthBody> {
  return (await res.json()) as HealthBody;
}

async function errorBody(res: Response): Promise<ErrorBody> {
  return (await res.json()) as ErrorBody;
}

@Injectable()
class AlwaysUp implements HealthCheck {
  readonly name = 'always-up';
  check(): void {}
}

class Toggle implements HealthCheck {
  healthy = true;
  constructor(readonly name: string) {}
  check(): Promise<void> {
    return this.healthy ? Promise.resolve() : Promise.reject(new Error('broker unreachable'));
  }
}

const TOGGLE = Symbol('TOGGLE');

@Controller('probe')
class ProbeController {
  constructor(private readonly logger: PinoLogger) {}

  @Get('log')
  log(): { correlationId: string | undefined } {
    this.logger.info({ card: { pan: PAN } }, `payer typed ${PAN}`);
    return { correlationId: currentCorrelationId() };
  }

  @Get('boom')
  boom(): never {
    throw new Error('database password=hunter2 leaked in stack');
  }

  @Get('teapot')
  teapot(): never {
    throw new HttpException({ code: 'AMOUNT_INVALID', message: 'amount must be > 0' }, 422);
  }
}

describe('ObservabilityModule + LoggingModule over HTTP', () => {
  let app: INestApplication;
  let base: string;
  const lines: string[] = [];
  const toggle = new Toggle('kafka');

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        LoggingModule.forRoot({
          service: 'probe-svc',
          version: '9.9.9',
          level: 'info',
          pretty: false,
          destination: { write: (chunk: string) => void lines.push(chunk) },
        }),
        ObservabilityModule.forRoot({ service: 'probe-svc', checkTimeoutMs: 500 }),
      ],
      controllers: [ProbeController],
      providers: [
        AlwaysUp,
        { provide: TOGGLE, useValue: toggle },
        { provide: APP_FILTER, useClass: HttpErrorFilter },
        ...provideHealthChecks({
          liveness: [AlwaysUp],
          readiness: [
            TOGGLE,
            {
              useFactory: (up: AlwaysUp) => ({ name: 'derived', check: () => up.check() }),
              inject: [AlwaysUp],
            },
            {
              useFactory: () => ({
                name: 'slow',
                check: () => new Promise<void>((r) => setTimeout(r, 50)),
              }),
            },
          ],
        }),
      ],
    }).compile();
    app = moduleRef.createNestApplication({ bufferLogs: true });
    app.useLogger(app.get(Logger));
    await app.listen(0, '127.0.0.1');
    base = await app.getUrl();
  });

  afterAll(async () => {
    await app.close();
  });

  it('answers liveness and readiness with every component', async () => {
    const live = await fetch(`${base}/health/live`);
    expect(live.status).toBe(200);
    expect((await health(live)).info).toEqual({ 'always-up': { status: 'up' } });
    const ready = await fetch(`${base}/health/ready`);
    expect(ready.status).toBe(200);
    expect(Object.keys((await health(ready)).info).sort()).toEqual(['derived', 'kafka', 'slow']);
  });

  it('answers 503 naming the failed component and the reason', async () => {
    toggle.healthy = false;
    try {
      const ready = await fetch(`${base}/health/ready`);
      expect(ready.status).toBe(503);
      const body = await health(ready);
      expect(body.status).toBe('error');
      expect(body.error).toEqual({ kafka: { status: 'down', message: 'broker unreachable' } });
      expect(body.info.derived).toEqual({ status: 'up' });
      expect((await fetch(`${base}/health/live`)).status).toBe(200);
    } finally {
      toggle.healthy = true;
    }
  });

  it('serves Prometheus metrics with process metrics and the service label', async () => {
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toMatch(/process_cpu_user_seconds_total\{service="probe-svc"\} \d/);
    expect(text).toContain('nodejs_heap_size_used_bytes');
  });

  it('carries the request correlation id into log lines and the handler, without the PAN', async () => {
    const res = await fetch(`${base}/probe/log`, {
      headers: { 'x-correlation-id': 'corr-http-1' },
    });
    expect(res.headers.get('x-correlation-id')).toBe('corr-http-1');
    expect(await res.json()).toEqual({ correlationId: 'corr-http-1' });
    const records = lines.map((l) => JSON.parse(l));
    const handlerLine = records.find(
      (r) => typeof r.msg === 'string' && r.msg.startsWith('payer typed'),
    );
    expect(handlerLine).toMatchObject({
      service: 'probe-svc',
      version: '9.9.9',
      correlationId: 'corr-http-1',
      msg: 'payer typed 411111******1111',
    });
    const completed = records.find(
      (r) => r.msg === 'request completed' && r.req?.path === '/probe/log',
    );
    expect(completed?.correlationId).toBe('corr-http-1');
    expect(lines.join('')).not.toContain(PAN);
  });

  it('generates a correlation id from traceparent when no explicit id is sent', async () => {
    const trace = '0af7651916cd43dd8448eb211c80319c';
    const res = await fetch(`${base}/probe/log`, {
      headers: {
        traceparent: `00-${trace}-b7ad6b7169203331-01`,
        authorization: 'Bearer s3cr3t-token',
      },
    });
    expect(res.headers.get('x-correlation-id')).toBe(trace);
    expect(lines.join('')).not.toContain('s3cr3t-token');
  });

  it('answers errors with code, message and errorId, never a stack or internals', async () => {
    const res = await fetch(`${base}/probe/boom`);
    expect(res.status).toBe(500);
    const body = await errorBody(res);
    expect(body).toEqual({
      error: {
        code: 'INTERNAL_ERROR',
        message: 'Internal server error',
        errorId: expect.any(String),
      },
    });
    expect(JSON.stringify(body)).not.toContain('hunter2');
    const logged = lines.map((l) => JSON.parse(l)).find((r) => r.errorId === body.error.errorId);
    expect(logged?.err?.message).toContain('database password');

    const rejected = await fetch(`${base}/probe/teapot`);
    expect(rejected.status).toBe(HttpStatus.UNPROCESSABLE_ENTITY);
    expect((await errorBody(rejected)).error).toMatchObject({
      code: 'AMOUNT_INVALID',
      message: 'amount must be > 0',
    });

    const missing = await fetch(`${base}/nowhere`);
    expect(missing.status).toBe(404);
    expect((await errorBody(missing)).error.code).toBe('NOT_FOUND');
  });
});
