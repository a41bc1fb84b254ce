import './tracing';
import { bootstrapHttpApp, createNestApp } from '@payments/bootstrap';
import { AppModule, SERVICE_NAME } from './app.module';
import { orchestratorConfigShape } from './config';

void bootstrapHttpApp({
  service: SERVICE_NAME,
  configShape: orchestratorConfigShape,
  createApp: (config, _, logger) => createNestApp(AppModule.forRoot(config, logger)),
});
