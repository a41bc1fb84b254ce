import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadConfigOrExit } from '@payments/config';
import { sandboxConfigShape, SandboxConfig } from './config';
import { MerchantConfigError } from './domain/merchants';
import { SandboxModule, createSandbox } from './sandbox.module';

async function bootstrap(): Promise<void> {
  const config: SandboxConfig = loadConfigOrExit('gateway-sandbox', sandboxConfigShape);
  const logger = new Logger('gateway-sandbox');
  let sandbox;
  try {
    sandbox = createSandbox(config);
  } catch (error) {
    if (error instanceof MerchantConfigError) {
      logger.error(error.message);
      process.exitCode = 78;
      return;
    }
    throw error;
  }
  const app = await NestFactory.create(SandboxModule.forRoot(config, sandbox), {
    bodyParser: false,
    logger: config.log.logLevel === 'silent' ? false : ['log', 'warn', 'error'],
  });
  app.enableShutdownHooks();
  await app.listen(config.http.port);
  logger.log(
    `listening on :${config.http.port}; merchants from ${config.merchantsFile}; ` +
      `test controls ${config.testControls ? 'ON' : 'off'}`,
  );
}

void bootstrap();
