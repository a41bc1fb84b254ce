export { bootstrapHttpApp, createNestApp } from './http-app';
