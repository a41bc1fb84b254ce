import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  DynamicModule,
  Inject,
  MiddlewareConsumer,
  Module,
  NestModule,
  RequestMethod,
} from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import type { Logger } from 'pino';
import { LoggingOptions, createLogger } from './logger';
import {
  boundCorrelationMiddleware,
  isQuietPath,
  requestCorrelationId,
  requestLineMiddleware,
  requestLogLevel,
} from './request-line';
import { serializeRequest, serializeResponse } from './http-serializers';

/** The root pino logger of the app, for adapters that want pino itself (kafkajs log creator). */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

const REQUEST_LOG_MODE = Symbol('REQUEST_LOG_MODE');

/**
 * How HTTP requests are logged:
 *  - `child-logger` (pino-http): per request, a child logger bound to the correlation id and a
 *    second one bound to the serialised request (redaction run on the binding), made whether
 *    or not the request's line is written at the configured level;
 *  - `line`: no logger per request; the correlation id rides in AsyncLocalStorage (the logger's
 *    mixin adds it to every line), and one line per finished request is written through the
 *    app's logger (redaction and the scrubber on it), only when its level is enabled.
 *  - `line-debug`: `line`, with a successful request's line at debug (a refused or failed one's
 *    stays at warn or error).
 * The line's fields and levels are the same in `child-logger` and `line`.
 */
export type RequestLogMode = 'child-logger' | 'line' | 'line-debug';

/**
 * JSON logging for a Nest app through nestjs-pino: one line per request (probes excluded) and
 * every line written while handling it carries `service`, `version` and `correlationId`.
 * Global: `PinoLogger`, nestjs-pino's `Logger` and ROOT_LOGGER are injectable everywhere.
 * In main.ts: `NestFactory.create(AppModule, { bufferLogs: true })` then `app.useLogger(app.get(Logger))`.
 */
@Module({})
export class LoggingModule implements NestModule {
  /** `logger`: reuse the pino logger main.ts already created for boot messages. */
  static forRoot(
    options: LoggingOptions & {
      readonly logger?: Logger;
      /** `child-logger` unless given (see RequestLogMode). */
      readonly requestLog?: RequestLogMode;
    },
  ): DynamicModule {
    const logger = options.logger ?? createLogger(options);
    const mode = options.requestLog ?? 'child-logger';
    return {
      module: LoggingModule,
      global: true,
      imports: [
        LoggerModule.forRoot({
          // `line`: nestjs-pino's logger (PinoLogger, the root) without its per-request middleware.
          ...(mode === 'child-logger' ? {} : { forRoutes: [] }),
          pinoHttp: {
            logger,
            genReqId: (req: IncomingMessage, res: ServerResponse) => requestCorrelationId(req, res),
            customAttributeKeys: { reqId: 'correlationId' },
            serializers: { req: serializeRequest, res: serializeResponse },
            quietReqLogger: true,
            autoLogging: {
              ignore: (req: IncomingMessage) => isQuietPath(req.url),
            },
            customLogLevel: (_req, res, error) => requestLogLevel(res.statusCode, error),
          },
        }),
      ],
      providers: [
        { provide: ROOT_LOGGER, useValue: logger satisfies Logger },
        { provide: REQUEST_LOG_MODE, useValue: mode },
      ],
      exports: [LoggerModule, ROOT_LOGGER],
    };
  }

  constructor(
    @Inject(REQUEST_LOG_MODE) private readonly mode: RequestLogMode,
    @Inject(ROOT_LOGGER) private readonly logger: Logger,
  ) {}

  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(
        this.mode === 'child-logger'
          ? boundCorrelationMiddleware
          : requestLineMiddleware(this.logger, this.mode === 'line-debug' ? 'debug' : 'info'),
      )
      .forRoutes({ path: '{/*splat}', method: RequestMethod.ALL });
  }
}
