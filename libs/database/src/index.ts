export * from './data-source';
export * from './migrate';
export * from './database.module';
