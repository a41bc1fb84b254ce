export {
  assertTestDatabase,
  createTestDatabase,
  serverUrl,
  type TestDatabase,
} from './test-database';
