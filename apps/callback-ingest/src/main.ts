import './tracing';
import { bootstrapHttpApp } from '@payments/bootstrap';
import { ConfigError } from '@payments/config';
import { SERVICE_NAME } from './app.module';
import { createCallbackIngestApp } from './bootstrap';
import { callbackIngestConfigShape, resolveControlKeys } from './config';

void bootstrapHttpApp({
  service: SERVICE_NAME,
  configShape: callbackIngestConfigShape,
  prepare: resolveControlKeys,
  configErrors: [ConfigError],
  details: (_, controlKeys) => ({ endpoints: controlKeys.endpointIds }),
  // In-flight requests finish on SIGTERM, the producer disconnects, then exit 0.
  createApp: (config, controlKeys, logger) =>
    createCallbackIngestApp({ config, controlKeys }, { logger }),
});
