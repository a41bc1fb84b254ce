export * from './correlation';
export * from './scrub';
export * from './logger';
export * from './logging.module';
export { InjectPinoLogger, Logger, PinoLogger } from 'nestjs-pino';
export * from './http-serializers';
