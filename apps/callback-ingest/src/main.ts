import { ConfigError, describeConfig, loadConfigOrExit } from '@payments/config';
import { createLogger } from '@payments/logging';
import { SERVICE_NAME } from './app.module';
import { createCallbackIngestApp } from './bootstrap';
import { callbackIngestConfigShape, resolveControlKeys } from './config';

async function bootstrap(): Promise<void> {
  const config = loadConfigOrExit(SERVICE_NAME, callbackIngestConfigShape);
  let controlKeys;
  try {
    controlKeys = resolveControlKeys(config);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  const logger = createLogger({
    service: SERVICE_NAME,
    version: config.version,
    level: config.log.logLevel,
    pretty: config.log.logPretty,
  });
  logger.debug(
    {
      config: describeConfig(callbackIngestConfigShape, config),
      endpoints: controlKeys.endpointIds,
    },
    'configuration',
  );
  try {
    const app = await createCallbackIngestApp({ config, controlKeys }, { logger });
    // SIGTERM/SIGINT: in-flight requests finish, the producer disconnects, then exit 0.
    app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
    await app.listen(config.http.port);
    logger.info(
      { url: await app.getUrl(), endpoints: controlKeys.endpointIds },
      `${SERVICE_NAME} listening on port ${config.http.port}`,
    );
  } catch (error) {
    logger.fatal({ err: error }, `${SERVICE_NAME} failed to start`);
    process.exit(1);
  }
}

void bootstrap();
