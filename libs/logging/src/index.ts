export { Logger, PinoLogger } from 'nestjs-pino';
export {
  CORRELATION_ID_HEADER,
  correlationIdFromHeaders,
  currentCorrelationId,
  runWithCorrelationId,
} from './correlation';
export { scrubString } from './scrub';
export { createLogger, loggingOptions, type LoggingOptions } from './logger';
export { LoggingModule, ROOT_LOGGER, type RequestLogMode } from './logging.module';
