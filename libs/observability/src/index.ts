export * from './health-check';
export * from './provide-health-checks';
export * from './database.health-check';
export * from './health.controller';
export * from './metrics';
export * from './options';
export * from './observability.module';
export * from './http-error.filter';
