import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { describeConfig, loadConfigOrExit } from '@payments/config';
import { Logger, createLogger } from '@payments/logging';
import { SandboxConfig, sandboxConfigShape } from './config';
import { MerchantConfigError } from './domain/merchants';
import { SERVICE_NAME, SandboxModule, createSandbox } from './sandbox.module';

async function bootstrap(): Promise<void> {
  const config: SandboxConfig = loadConfigOrExit(SERVICE_NAME, sandboxConfigShape);
  const logger = createLogger({
    service: SERVICE_NAME,
    version: config.version,
    level: config.log.logLevel,
    pretty: config.log.logPretty,
  });
  let sandbox;
  try {
    sandbox = createSandbox(config);
  } catch (error) {
    if (error instanceof MerchantConfigError) {
      logger.fatal(error.message);
      process.exit(78);
    }
    throw error;
  }
  logger.debug({ config: describeConfig(sandboxConfigShape, config) }, 'configuration');
  try {
    const app = await NestFactory.create<NestExpressApplication>(
      SandboxModule.forRoot(config, sandbox, logger),
      { bufferLogs: true, abortOnError: false, bodyParser: false },
    );
    app.useLogger(app.get(Logger));
    app.disable('x-powered-by');
    app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
    await app.listen(config.http.port);
    logger.info(
      {
        merchantsFile: config.merchantsFile,
        testControls: config.testControls,
        merchants: sandbox.merchants.allMerchants().map((m) => m.login),
      },
      `${SERVICE_NAME} listening on port ${config.http.port}`,
    );
  } catch (error) {
    logger.fatal({ err: error }, `${SERVICE_NAME} failed to start`);
    process.exit(1);
  }
}

void bootstrap();
