import { NestFactory } from '@nestjs/core';
import { describeConfig, loadConfigOrExit } from '@payments/config';
import { createLogger, Logger } from '@payments/logging';
import { AppModule, SERVICE_NAME } from './app.module';
import { gatewayAdapterConfigShape } from './config';
import {
  AdapterSecretsError,
  loadAdapterSecrets,
  type AdapterSecrets,
} from './secrets/credentials';

async function bootstrap(): Promise<void> {
  const config = loadConfigOrExit(SERVICE_NAME, gatewayAdapterConfigShape);
  let secrets: AdapterSecrets;
  try {
    secrets = loadAdapterSecrets(config);
  } catch (error) {
    if (!(error instanceof AdapterSecretsError)) throw error;
    // Like a bad variable: exit 78 (EX_CONFIG) naming each entry and field, never a value.
    process.stderr.write(`${error.message}\n`);
    process.exit(78);
  }
  const logger = createLogger({
    service: SERVICE_NAME,
    version: config.version,
    level: config.log.logLevel,
    pretty: config.log.logPretty,
  });
  logger.debug({ config: describeConfig(gatewayAdapterConfigShape, config) }, 'configuration');
  logger.info(
    { endpoints: secrets.endpoints.map((e) => ({ name: e.name, baseUrl: e.baseUrl })) },
    'gateway credentials loaded',
  );
  try {
    const app = await NestFactory.create(AppModule.forRoot(config, secrets, { logger }), {
      bufferLogs: true,
      abortOnError: false,
    });
    app.useLogger(app.get(Logger));
    // SIGTERM/SIGINT: onModuleDestroy, beforeApplicationShutdown (consumer stops), HTTP server
    // close, onApplicationShutdown (producer, gateway pools, database close), then exit 0.
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
