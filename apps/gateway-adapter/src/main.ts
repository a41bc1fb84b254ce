import './tracing';
import { bootstrapHttpApp, createNestApp } from '@payments/bootstrap';
import { AppModule, SERVICE_NAME } from './app.module';
import { gatewayAdapterConfigShape } from './config';
import { AdapterSecretsError, loadAdapterSecrets } from './secrets/credentials';

void bootstrapHttpApp({
  service: SERVICE_NAME,
  configShape: gatewayAdapterConfigShape,
  // Like a bad variable: exit 78 (EX_CONFIG) naming each entry and field, never a value.
  prepare: loadAdapterSecrets,
  configErrors: [AdapterSecretsError],
  createApp: (config, secrets, logger) => {
    logger.info(
      { endpoints: secrets.endpoints.map((e) => ({ name: e.name, baseUrl: e.baseUrl })) },
      'gateway credentials loaded',
    );
    return createNestApp(AppModule.forRoot(config, secrets, { logger }));
  },
});
