import path from 'node:path';

interface Probe {
  fold(text: string): string;
  startsTransaction(session: { open: boolean }, key: string): boolean;
  routeOf(method: string, url: string): string;
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const probe = require(path.join(__dirname, 'probe.cjs')) as Probe;

/** Transactions a connection makes for statements sent in this order. */
function transactions(statements: readonly string[]): number {
  const session = { open: false };
  return statements.filter((s) => probe.startsTransaction(session, s)).length;
}

describe('the benchmark probe', () => {
  it('counts BEGIN … COMMIT as one transaction and each statement outside one as its own', () => {
    expect(transactions(['SELECT 1', 'SELECT 2'])).toBe(2);
    expect(transactions(['BEGIN', 'SELECT 1', 'UPDATE t SET a = 1', 'COMMIT'])).toBe(1);
    expect(
      transactions(['START TRANSACTION', 'INSERT INTO t VALUES (…)', 'ROLLBACK', 'DELETE FROM t']),
    ).toBe(2);
    expect(transactions(['begin', 'SELECT 1', 'commit', 'SELECT 1', 'BEGIN', 'COMMIT'])).toBe(3);
  });

  it('folds what varies between executions of one statement, not the statement itself', () => {
    expect(probe.fold('INSERT INTO t (a, b)\n   VALUES ($1, $2), ($3, $4)')).toBe(
      'INSERT INTO t (a, b) VALUES (…)',
    );
    expect(probe.fold('INSERT INTO t (a, b) VALUES ($1, $2)')).toBe(
      probe.fold('INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4), ($5, $6)'),
    );
    expect(probe.fold('SELECT a FROM t')).not.toBe(probe.fold('SELECT b FROM t'));
  });

  it('names a request by its route, ids and numbers folded, the query string dropped', () => {
    expect(probe.routeOf('GET', '/callbacks/gateway/1113?status=approved&orderid=9')).toBe(
      'GET /callbacks/gateway/:n',
    );
    expect(probe.routeOf('POST', '/paynet/api/v2/sale/1113')).toBe('POST /paynet/api/v2/sale/:n');
    expect(probe.routeOf('GET', '/payments/0b6f3c2e-1d4a-4f8e-9c3b-2a1d5e6f7a8b/events')).toBe(
      'GET /payments/:id/events',
    );
  });
});
