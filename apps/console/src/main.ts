import './tracing';
import { bootstrapHttpApp } from '@payments/bootstrap';
import { SERVICE_NAME } from './app.module';
import { createConsoleApp } from './bootstrap';
import { consoleConfigShape } from './config';

void bootstrapHttpApp({
  service: SERVICE_NAME,
  configShape: consoleConfigShape,
  details: (config) => ({ adminApi: config.adminApi.url }),
  createApp: (config, _prepared, logger) => createConsoleApp(config, { logger }),
});
