import { parseDatabaseUrl } from './database-url';
import { NoWritablePrimaryError } from './failover-client';
import {
  classifyDatabaseError,
  isDatabaseUnavailable,
  retryOnFailover,
  type DatabaseFailure,
} from './retry';

/** A pg-style error: a message and a SQLSTATE or errno code. */
function pgError(code: string | undefined, message = 'failed'): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code });
}

/** TypeORM's QueryFailedError keeps pg's error as driverError. */
function queryFailed(driverError: Error): Error {
  return Object.assign(new Error(`QueryFailedError: ${driverError.message}`), { driverError });
}

describe('classifyDatabaseError', () => {
  it.each<[string, DatabaseFailure, unknown]>([
    [
      'a standby refusing a write (25006)',
      'not-applied',
      pgError('25006', 'cannot execute INSERT in a read-only transaction'),
    ],
    ['25006 inside a TypeORM QueryFailedError', 'not-applied', queryFailed(pgError('25006'))],
    [
      'the server starting up (57P03)',
      'not-applied',
      pgError('57P03', 'the database system is starting up'),
    ],
    [
      'connection refused',
      'not-applied',
      pgError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:25432'),
    ],
    [
      'pg-pool connect timeout',
      'not-applied',
      pgError(undefined, 'timeout exceeded when trying to connect'),
    ],
    [
      'no writable host',
      'not-applied',
      new NoWritablePrimaryError([{ host: 'h', port: 1 }], new Error('down')),
    ],
    ['connection reset mid-statement', 'outcome-unknown', pgError('ECONNRESET', 'read ECONNRESET')],
    [
      'connection terminated unexpectedly',
      'outcome-unknown',
      pgError(undefined, 'Connection terminated unexpectedly'),
    ],
    [
      'admin shutdown (57P01)',
      'outcome-unknown',
      queryFailed(pgError('57P01', 'terminating connection due to administrator command')),
    ],
    [
      'the rest of a transaction whose connection died (TypeORM)',
      'outcome-unknown',
      Object.assign(
        new Error('Database connection provided by a query runner was already released'),
        {
          name: 'QueryRunnerProviderAlreadyReleasedError',
        },
      ),
    ],
    [
      'the COMMIT of a transaction whose connection died (TypeORM)',
      'outcome-unknown',
      Object.assign(new Error('Query runner already released. Cannot run queries anymore.'), {
        name: 'QueryRunnerAlreadyReleasedError',
      }),
    ],
    ['crash shutdown (57P02)', 'outcome-unknown', pgError('57P02')],
    ['a unique violation', 'other', queryFailed(pgError('23505', 'duplicate key value'))],
    ['a serialization failure', 'other', pgError('40001')],
    ['a plain bug', 'other', new TypeError('x is undefined')],
    ['not an error at all', 'other', 'boom'],
  ])('%s is %s', (_name, kind, error) => {
    expect(classifyDatabaseError(error)).toBe(kind);
  });
});

describe('isDatabaseUnavailable', () => {
  it('is true when the database could not take the statement, false when the statement was at fault', () => {
    expect(
      isDatabaseUnavailable(new NoWritablePrimaryError([{ host: 'a', port: 1 }], undefined)),
    ).toBe(true);
    expect(isDatabaseUnavailable(queryFailed(pgError('25006')))).toBe(true);
    expect(isDatabaseUnavailable(pgError('57P01', 'terminating connection'))).toBe(true);
    expect(isDatabaseUnavailable(queryFailed(pgError('23505', 'duplicate key')))).toBe(false);
    expect(isDatabaseUnavailable(new Error('a bug'))).toBe(false);
  });
});

describe('retryOnFailover', () => {
  /** A fake clock the sleeps advance. */
  function environment() {
    let now = 0;
    const sleeps: number[] = [];
    return {
      sleeps,
      env: {
        now: () => now,
        sleep: (ms: number) => {
          sleeps.push(ms);
          now += ms;
          return Promise.resolve();
        },
      },
    };
  }
  const policy = { deadlineMs: 1000, initialDelayMs: 100, maxDelayMs: 400 };

  it('given failures of an allowed kind then success, when retried, then it returns the result after growing pauses', async () => {
    const { env, sleeps } = environment();
    const failures = [pgError('ECONNREFUSED'), pgError('25006'), pgError('57P03')];
    const work = jest.fn(() => {
      const next = failures.shift();
      return next === undefined ? Promise.resolve('done') : Promise.reject(next);
    });
    await expect(retryOnFailover(work, ['not-applied'], policy, env)).resolves.toBe('done');
    expect(work).toHaveBeenCalledTimes(4);
    expect(sleeps).toEqual([100, 200, 400]);
  });

  it('given an outcome-unknown failure, when only not-applied may retry (the adapter claim), then it is thrown at once', async () => {
    const { env } = environment();
    const lost = pgError('ECONNRESET');
    const work = jest.fn(() => Promise.reject(lost));
    await expect(retryOnFailover(work, ['not-applied'], policy, env)).rejects.toBe(lost);
    expect(work).toHaveBeenCalledTimes(1);
  });

  it('given an outcome-unknown failure, when the work is idempotent (the unit of work), then it is retried', async () => {
    const { env } = environment();
    let calls = 0;
    const work = () =>
      ++calls === 1
        ? Promise.reject(pgError(undefined, 'Connection terminated unexpectedly'))
        : Promise.resolve(calls);
    await expect(
      retryOnFailover(work, ['not-applied', 'outcome-unknown'], policy, env),
    ).resolves.toBe(2);
  });

  it('given another failure, when run, then it is never retried', async () => {
    const { env } = environment();
    const work = jest.fn(() => Promise.reject(pgError('23505')));
    await expect(
      retryOnFailover(work, ['not-applied', 'outcome-unknown'], policy, env),
    ).rejects.toThrow();
    expect(work).toHaveBeenCalledTimes(1);
  });

  it('given no primary for longer than the deadline, when retried, then the last error is thrown', async () => {
    const { env, sleeps } = environment();
    const work = jest.fn(() => Promise.reject(pgError('ECONNREFUSED')));
    await expect(retryOnFailover(work, ['not-applied'], policy, env)).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
    expect(sleeps.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(policy.deadlineMs);
  });
});

describe('parseDatabaseUrl', () => {
  it('reads every host of a multi-host URL with target_session_attrs', () => {
    expect(
      parseDatabaseUrl(
        'postgres://app:s%40cret@10.0.0.1:5433,db-2,[::1]:6000/payments?target_session_attrs=read-write&sslmode=require',
      ),
    ).toEqual({
      hosts: [
        { host: '10.0.0.1', port: 5433 },
        { host: 'db-2', port: 5432 },
        { host: '::1', port: 6000 },
      ],
      user: 'app',
      password: 's@cret',
      database: 'payments',
      targetSessionAttrs: 'read-write',
      params: { sslmode: 'require' },
    });
  });

  it('reads a single-host URL as any session', () => {
    expect(parseDatabaseUrl('postgres://postgres@127.0.0.1:5432/postgres')).toMatchObject({
      hosts: [{ host: '127.0.0.1', port: 5432 }],
      targetSessionAttrs: 'any',
    });
  });

  it.each([
    'mysql://h/db',
    'postgres://h:99999/db',
    'postgres://a,/db',
    'postgres://h/db?target_session_attrs=standby',
  ])('refuses %s', (url) => {
    expect(() => parseDatabaseUrl(url)).toThrow(/database URL/);
  });
});
