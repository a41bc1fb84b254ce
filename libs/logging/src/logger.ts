import pino, { DestinationStream, Logger, LoggerOptions } from 'pino';
import { correlationIdForMixin } from './correlation';
import { REDACTED, redactPaths, scrubString, scrubValue } from './scrub';

export interface LoggingOptions {
  /** Service name on every line, e.g. 'orchestrator'. */
  readonly service: string;
  /** Build or package version on every line. */
  readonly version: string;
  /** pino level: fatal, error, warn, info, debug, trace or silent. */
  readonly level: string;
  /** Human-readable output through pino-pretty (a dev dependency): local use only. */
  readonly pretty: boolean;
  /** Where JSON lines go; stdout by default. Tests pass a capturing stream. Ignored when pretty. */
  readonly destination?: DestinationStream;
}

/** The part of every app's configuration that logging reads (APP_VERSION, LOG_LEVEL, LOG_PRETTY). */
export interface AppLogConfig {
  readonly version: string;
  readonly log: { readonly logLevel: string; readonly logPretty: boolean };
}

/** Logging options of an app from its resolved configuration. */
export function loggingOptions(service: string, config: AppLogConfig): LoggingOptions {
  return {
    service,
    version: config.version,
    level: config.log.logLevel,
    pretty: config.log.logPretty,
  };
}

/** The pino options every logger of the project shares (base fields, redaction, scrubbing). */
export function buildPinoOptions(options: LoggingOptions): LoggerOptions {
  return {
    level: options.level,
    base: { service: options.service, version: options.version },
    timestamp: pino.stdTimeFunctions.isoTime,
    messageKey: 'msg',
    redact: { paths: redactPaths(), censor: REDACTED },
    mixin() {
      const correlationId = correlationIdForMixin();
      return correlationId === undefined ? {} : { correlationId };
    },
    formatters: {
      level: (label) => ({ level: label }),
      // Deep value-based scrub of the merged object (card numbers, PEM keys, sensitive keys).
      log: (object) => scrubValue(object) as Record<string, unknown>,
    },
    hooks: {
      // The message and its format arguments are not seen by formatters.log: scrub them here.
      logMethod(args, method) {
        const cleaned = args.map((arg: unknown) =>
          typeof arg === 'string' ? scrubString(arg) : arg,
        ) as Parameters<typeof method>;
        method.apply(this, cleaned);
      },
    },
  };
}

/** A plain pino logger for code outside Nest (scripts, the kafkajs log adapter). */
export function createLogger(options: LoggingOptions): Logger {
  const pinoOptions = buildPinoOptions(options);
  if (options.pretty) {
    return pino({
      ...pinoOptions,
      transport: { target: 'pino-pretty', options: { colorize: true, singleLine: true } },
    });
  }
  return options.destination ? pino(pinoOptions, options.destination) : pino(pinoOptions);
}
