import { Logger as NestLogger } from '@nestjs/common';
import { logLevel as KafkaLogLevel, type logCreator } from 'kafkajs';

/**
 * The logging interface this library needs; a pino logger (libs/logging `createLogger`, or
 * nestjs-pino's `PinoLogger.logger`) satisfies it. kafkajs's own logs are routed here instead of
 * the console. Message values are never logged, only coordinates.
 */
export interface KafkaLogger {
  debug(obj: Record<string, unknown>, msg: string): void;
  info(obj: Record<string, unknown>, msg: string): void;
  warn(obj: Record<string, unknown>, msg: string): void;
  error(obj: Record<string, unknown>, msg: string): void;
}

export type KafkaLogLevelName = 'error' | 'warn' | 'info' | 'debug' | 'nothing';

export function toKafkaJsLevel(level: KafkaLogLevelName): KafkaLogLevel {
  switch (level) {
    case 'nothing':
      return KafkaLogLevel.NOTHING;
    case 'error':
      return KafkaLogLevel.ERROR;
    case 'warn':
      return KafkaLogLevel.WARN;
    case 'info':
      return KafkaLogLevel.INFO;
    case 'debug':
      return KafkaLogLevel.DEBUG;
  }
}

/** A kafkajs `logCreator` writing to `logger`, with the kafkajs namespace as a field. */
export function kafkaJsLogCreator(logger: KafkaLogger): logCreator {
  return () =>
    ({ namespace, level, log }) => {
      // `timestamp` and `logger: 'kafkajs'` duplicate what the logger adds itself.
      const { message, timestamp: _timestamp, logger: _name, ...fields } = log;
      const entry = { ...fields, component: 'kafkajs', namespace };
      switch (level) {
        case KafkaLogLevel.ERROR:
          logger.error(entry, message);
          break;
        case KafkaLogLevel.WARN:
          logger.warn(entry, message);
          break;
        case KafkaLogLevel.INFO:
          logger.info(entry, message);
          break;
        case KafkaLogLevel.DEBUG:
          logger.debug(entry, message);
          break;
        case KafkaLogLevel.NOTHING:
          break;
      }
    };
}

/** Fallback when no logger is given: Nest's Logger (which respects the app's logger setup). */
export function nestKafkaLogger(context = 'Kafka'): KafkaLogger {
  const nest = new NestLogger(context);
  const line = (obj: Record<string, unknown>, msg: string) =>
    Object.keys(obj).length > 0 ? `${msg} ${JSON.stringify(obj)}` : msg;
  return {
    debug: (obj, msg) => nest.debug(line(obj, msg)),
    info: (obj, msg) => nest.log(line(obj, msg)),
    warn: (obj, msg) => nest.warn(line(obj, msg)),
    error: (obj, msg) => nest.error(line(obj, msg)),
  };
}
