import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  DynamicModule,
  MiddlewareConsumer,
  Module,
  NestModule,
  RequestMethod,
} from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';
import {
  CORRELATION_ID_HEADER,
  correlationIdFromHeaders,
  runWithBoundCorrelationId,
} from './correlation';
import { LoggingOptions, createLogger } from './logger';
import { serializeRequest, serializeResponse } from './http-serializers';

/** The root pino logger of the app, for adapters that want pino itself (kafkajs log creator). */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/** Paths whose successful requests are not logged (probes and scrapes every few seconds). */
const QUIET_PATHS = ['/health/live', '/health/ready', '/metrics'];

type RequestWithId = IncomingMessage & { id?: unknown };

/** The correlation id of a request: chosen once, remembered on `req.id`, echoed to the caller. */
function requestCorrelationId(req: RequestWithId, res: ServerResponse): string {
  if (typeof req.id === 'string') return req.id;
  const id = correlationIdFromHeaders(req.headers);
  req.id = id;
  if (!res.headersSent) res.setHeader(CORRELATION_ID_HEADER, id);
  return id;
}

function correlationMiddleware(req: RequestWithId, res: ServerResponse, next: () => void): void {
  runWithBoundCorrelationId(requestCorrelationId(req, res), next);
}

/**
 * JSON logging for a Nest app through nestjs-pino: one line per request (probes excluded) and
 * every line written while handling it carries `service`, `version` and `correlationId`.
 * Global: `PinoLogger`, nestjs-pino's `Logger` and ROOT_LOGGER are injectable everywhere.
 * In main.ts: `NestFactory.create(AppModule, { bufferLogs: true })` then `app.useLogger(app.get(Logger))`.
 */
@Module({})
export class LoggingModule implements NestModule {
  /** `logger`: reuse the pino logger main.ts already created for boot messages. */
  static forRoot(options: LoggingOptions & { readonly logger?: Logger }): DynamicModule {
    const logger = options.logger ?? createLogger(options);
    return {
      module: LoggingModule,
      global: true,
      imports: [
        LoggerModule.forRoot({
          pinoHttp: {
            logger,
            genReqId: (req: IncomingMessage, res: ServerResponse) => requestCorrelationId(req, res),
            customAttributeKeys: { reqId: 'correlationId' },
            serializers: { req: serializeRequest, res: serializeResponse },
            quietReqLogger: true,
            autoLogging: {
              ignore: (req: IncomingMessage) => QUIET_PATHS.includes((req.url ?? '').split('?')[0]),
            },
            customLogLevel: (_req, res, error) =>
              error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
          },
        }),
      ],
      providers: [{ provide: ROOT_LOGGER, useValue: logger satisfies Logger }],
      exports: [LoggerModule, ROOT_LOGGER],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(correlationMiddleware)
      .forRoutes({ path: '{/*splat}', method: RequestMethod.ALL });
  }
}
