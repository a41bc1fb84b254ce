import { NestFactory } from '@nestjs/core';
import { describeConfig, loadConfigOrExit } from '@payments/config';
import { createLogger, Logger } from '@payments/logging';
import { AppModule, SERVICE_NAME } from './app.module';
import { orchestratorConfigShape } from './config';

async function bootstrap(): Promise<void> {
  const config = loadConfigOrExit(SERVICE_NAME, orchestratorConfigShape);
  const logger = createLogger({
    service: SERVICE_NAME,
    version: config.version,
    level: config.log.logLevel,
    pretty: config.log.logPretty,
  });
  logger.debug({ config: describeConfig(orchestratorConfigShape, config) }, 'configuration');
  try {
    const app = await NestFactory.create(AppModule.forRoot(config, logger), {
      bufferLogs: true,
      abortOnError: false,
    });
    app.useLogger(app.get(Logger));
    // SIGTERM/SIGINT: onModuleDestroy, beforeApplicationShutdown (consumers stop), HTTP server
    // close, onApplicationShutdown (database closes), then exit 0 (flushes pino).
    app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
    await app.listen(config.http.port);
    logger.info(
      { url: await app.getUrl() },
      `${SERVICE_NAME} listening on port ${config.http.port}`,
    );
  } catch (error) {
    logger.fatal({ err: error }, `${SERVICE_NAME} failed to start`);
    process.exit(1);
  }
}

void bootstrap();
