export * from './http-app';
