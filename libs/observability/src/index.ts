export * from './health-check';
