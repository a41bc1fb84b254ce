import './tracing';
import 'reflect-metadata';
import { bootstrapHttpApp, createNestApp } from '@payments/bootstrap';
import { sandboxConfigShape } from './config';
import { MerchantConfigError } from './domain/merchants';
import { AppModule, SERVICE_NAME, createSandbox } from './app.module';

void bootstrapHttpApp({
  service: SERVICE_NAME,
  configShape: sandboxConfigShape,
  prepare: createSandbox,
  configErrors: [MerchantConfigError],
  details: (config, sandbox) => ({
    merchantsFile: config.merchantsFile,
    testControls: config.testControls,
    merchants: sandbox.merchants.allMerchants().map((m) => m.login),
  }),
  // No body parser: the API reads and verifies the raw request.
  createApp: async (config, sandbox, logger) => {
    const module = AppModule.forRoot(config, { sandbox, logger });
    const app = await createNestApp(module, { bodyParser: false });
    app.disable('x-powered-by');
    return app;
  },
});
