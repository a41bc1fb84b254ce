export {
  assertTestDatabase,
  createTestDatabase,
  serverUrl,
  type TestDatabase,
} from './test-database';
export { waitUntil } from './wait-until';
