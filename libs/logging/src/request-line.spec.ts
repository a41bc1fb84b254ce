import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { createLogger } from './logger';
import { requestLineMiddleware } from './request-line';

const PAN = '4111111111111111';

interface Running {
  readonly base: string;
  readonly lines: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/**
 * A node:http server whose every request goes through the middleware, then a handler that
 * logs one line itself and answers with the status named in the path (`/status/404`).
 */
async function serve(level: string, successLevel: 'info' | 'debug' = 'info'): Promise<Running> {
  const lines: Array<Record<string, unknown>> = [];
  const logger: Logger = createLogger({
    service: 'line-test',
    version: '1',
    level,
    pretty: false,
    destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
  });
  const middleware = requestLineMiddleware(logger, successLevel);
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    logger.warn({ step: 'handler' }, 'handling');
    const status = Number(/^\/status\/(\d{3})/.exec(req.url ?? '')?.[1] ?? 200);
    // Answered on a later turn: the correlation id must follow the request across awaits.
    setImmediate(() => {
      res.statusCode = status;
      res.end('{}');
    });
  };
  const server: Server = createServer((req, res) => middleware(req, res, () => handler(req, res)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    base: `http://127.0.0.1:${port}`,
    lines,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The request line of a request, once it has been written (after the response). */
async function requestLine(
  running: Running,
  path: string,
  correlationId: string,
): Promise<Record<string, unknown> | undefined> {
  const res = await fetch(`${running.base}${path}`, {
    headers: { 'x-correlation-id': correlationId, authorization: 'Bearer s3cr3t' },
  });
  expect(res.headers.get('x-correlation-id')).toBe(correlationId);
  await res.text();
  // The line is written on the response's 'finish', which may follow the client's read.
  for (let i = 0; i < 50; i += 1) {
    const line = running.lines.find(
      (l) => l.correlationId === correlationId && typeof l.req === 'object',
    );
    if (line !== undefined) return line;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return undefined;
}

describe('requestLineMiddleware (HTTP_REQUEST_LOG=line)', () => {
  let running: Running;

  beforeAll(async () => {
    running = await serve('info');
  });

  afterAll(() => running.close());

  it('writes one line per request: path without query values, status, level by status', async () => {
    const ok = await requestLine(
      running,
      '/callbacks/gateway/7?control=abc123&email=a%40b.c',
      'c-1',
    );
    expect(ok).toMatchObject({
      level: 'info',
      msg: 'request completed',
      correlationId: 'c-1',
      req: {
        id: 'c-1',
        method: 'GET',
        path: '/callbacks/gateway/7',
        queryKeys: ['control', 'email'],
      },
      res: { statusCode: 200 },
      responseTime: expect.any(Number),
    });
    expect(running.lines.filter((l) => l.correlationId === 'c-1' && l.req)).toHaveLength(1);
    expect(await requestLine(running, '/status/404', 'c-2')).toMatchObject({
      level: 'warn',
      msg: 'request completed',
      res: { statusCode: 404 },
    });
    expect(await requestLine(running, '/status/503', 'c-3')).toMatchObject({
      level: 'error',
      msg: 'request errored',
      res: { statusCode: 503 },
      err: { message: 'failed with status code 503' },
    });
    const text = JSON.stringify(running.lines);
    for (const secret of ['abc123', 'a@b.c', 's3cr3t']) expect(text).not.toContain(secret);
  });

  it("gives the handler's lines the request's correlation id", async () => {
    await requestLine(running, '/anything', 'c-4');
    const handlerLines = running.lines.filter(
      (l) => l.msg === 'handling' && l.correlationId === 'c-4',
    );
    expect(handlerLines).toHaveLength(1);
  });

  it('masks a card number in the path (the scrubber sees the whole line)', async () => {
    const line = await requestLine(running, `/callbacks/gateway/${PAN}`, 'c-5');
    expect(line?.req).toMatchObject({ path: '/callbacks/gateway/411111******1111' });
    expect(JSON.stringify(running.lines)).not.toContain(PAN);
  });

  it('leaves successful probes and scrapes out, but not their failures', async () => {
    await fetch(`${running.base}/health/live`, { headers: { 'x-correlation-id': 'c-6' } });
    await fetch(`${running.base}/metrics`, { headers: { 'x-correlation-id': 'c-6' } });
    await requestLine(running, '/anything', 'c-7');
    expect(running.lines.filter((l) => l.correlationId === 'c-6' && l.req)).toEqual([]);
  });
});

describe('requestLineMiddleware: which lines a level and the success level let through', () => {
  it.each([
    ['warn', 'info', 'none', undefined],
    ['info', 'debug', 'none (HTTP_REQUEST_LOG=line-debug)', undefined],
    ['debug', 'debug', 'one at debug', 'debug'],
  ] as const)(
    'at %s, successful requests at %s: success lines %s; a refused one at warn',
    async (level, successLevel, _what, successLine) => {
      const running = await serve(level, successLevel);
      try {
        const res = await fetch(`${running.base}/fine`, { headers: { 'x-correlation-id': 's-1' } });
        await res.text();
        expect(await requestLine(running, '/status/404', 's-2')).toMatchObject({
          level: 'warn',
          res: { statusCode: 404 },
        });
        const fine = running.lines.filter((l) => l.correlationId === 's-1' && l.req);
        expect(fine).toEqual(
          successLine === undefined ? [] : [expect.objectContaining({ level: successLine })],
        );
      } finally {
        await running.close();
      }
    },
  );
});
