export * from './config';
export * from './schemas';
export * from './boot';
