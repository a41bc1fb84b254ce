import { assertTestDatabase, databaseNameOf } from './test-database';

describe('assertTestDatabase', () => {
  it.each([
    'postgres://postgres@127.0.0.1:5432/payments',
    'postgres://postgres@127.0.0.1:5432/postgres',
    'postgresql://user:pw@db.internal/orders_prod?sslmode=require',
    'postgres://postgres@127.0.0.1:5432',
    'postgres://postgres@127.0.0.1:5432/',
    'postgres://test-host.example:5432/payments',
    'postgres://test:test@127.0.0.1/payments',
  ])('refuses %s', (url) => {
    expect(() => assertTestDatabase(url)).toThrow(/must contain "test"/);
  });

  it.each([
    ['postgres://postgres@127.0.0.1:5432/payments_test_outbox_1a2b', 'payments_test_outbox_1a2b'],
    ['postgresql://u@h/TEST_db?sslmode=disable', 'TEST_db'],
    ['postgres://u@h/my%20test', 'my test'],
  ])('accepts %s', (url, name) => {
    expect(assertTestDatabase(url)).toBe(name);
  });

  it('rejects what is not a URL', () => {
    expect(() => assertTestDatabase('payments_test')).toThrow('not a valid database URL');
  });

  it('reads the name from the path only', () => {
    expect(databaseNameOf('postgres://h/a_b?application_name=test')).toBe('a_b');
  });
});
