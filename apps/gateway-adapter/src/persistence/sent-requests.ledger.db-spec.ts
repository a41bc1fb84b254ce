/**
 * The sent-requests ledger against PostgreSQL: at most one ordinary attempt of a request may be
 * claimed, also when two adapter replicas claim different attempts at the same moment — whether
 * the claim runs alone or inside the hand-off's statement.
 */
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { createDataSource, runMigrations } from '@payments/database';
import { createTestDatabase, type TestDatabase } from '@payments/testing';
import { handoffSettings } from '../config';
import { adapterMigrations } from '../migrations';
import { RequestHandoffs } from './request-handoffs';
import { type SentRequestRecord, SentRequestsLedger } from './sent-requests.ledger';

describe('sent-requests ledger (real PostgreSQL)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let ledger: SentRequestsLedger;
  let handoffs: RequestHandoffs;

  beforeAll(async () => {
    db = await createTestDatabase('adapter_ledger');
    dataSource = createDataSource({
      url: db.url,
      poolSize: 4,
      migrations: adapterMigrations,
      entities: [],
      applicationName: 'adapter-ledger-test',
    });
    await runMigrations(dataSource, { info: () => undefined });
    ledger = new SentRequestsLedger(dataSource);
    handoffs = new RequestHandoffs(dataSource, handoffSettings());
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  const record = (requestId: string, attempt: number): SentRequestRecord => ({
    requestId,
    attempt,
    operation: 'sale',
    paymentId: requestId,
    endpointId: '1',
    clientOrderId: requestId,
  });

  it('refuses a second attempt while one is recorded; a released one frees the request', async () => {
    const id = randomUUID();
    expect(await ledger.claim(record(id, 1))).toBe(true);
    expect(await ledger.claim(record(id, 1))).toBe(false);
    expect(await ledger.claim(record(id, 2))).toBe(false);
    await ledger.release(id, 1);
    expect(await ledger.claim(record(id, 2))).toBe(true);
    // An attempt sent past the earlier one on purpose (afterNoTrace) passes it, once each.
    expect(await ledger.claim(record(id, 1000), { afterNoTrace: true })).toBe(true);
    expect(await ledger.claim(record(id, 1000), { afterNoTrace: true })).toBe(false);
    expect(await ledger.claim(record(id, 3), { afterNoTrace: true })).toBe(true);
    expect(await ledger.claim(record(id, 4))).toBe(false);
  });

  // Attempt 2's claim, alone or inside the hand-off's statement (GATEWAY_CLAIM_AT_HANDOFF).
  const claimsOfAttempt2: Array<[string, (id: string) => Promise<boolean>]> = [
    ['alone', (id) => ledger.claim(record(id, 2))],
    [
      'in the hand-off statement',
      async (id) =>
        (
          await handoffs.accept(
            {
              requestId: id,
              attempt: 2,
              paymentId: id,
              operation: 'sale',
              endpointId: '1',
              headers: {},
            },
            'replica-b',
            10_000,
            { record: record(id, 2), options: {} },
          )
        ).claimed,
    ],
  ];

  it.each(claimsOfAttempt2)(
    'two replicas claiming different attempts of one request at once: exactly one may send (claim %s)',
    async (_, claimAttempt2) => {
      const id = randomUUID();
      // Replica A's claim of attempt 1 is written but not yet committed when replica B claims
      // attempt 2: B's "no other attempt" check cannot see A's row.
      const replicaA = new Client({ connectionString: db.url });
      await replicaA.connect();
      try {
        await replicaA.query('BEGIN');
        await replicaA.query(
          `INSERT INTO adapter_sent_requests
           (request_id, attempt, operation, payment_id, endpoint_id, client_order_id)
         VALUES ($1::uuid, 1, 'sale', $1::uuid, '1', $1::text)`,
          [id],
        );
        const replicaB = claimAttempt2(id);
        // B waits for A (the unique index) rather than writing a second attempt beside it.
        const early = await Promise.race([
          replicaB.then(() => 'answered'),
          new Promise((resolve) => setTimeout(() => resolve('waiting'), 500)),
        ]);
        await replicaA.query('COMMIT');
        expect({ early, claimed: await replicaB }).toEqual({ early: 'waiting', claimed: false });
      } finally {
        await replicaA.end();
      }
      const rows: Array<{ attempt: number }> = await dataSource.query(
        'SELECT attempt FROM adapter_sent_requests WHERE request_id = $1',
        [id],
      );
      expect(rows.map((r) => r.attempt)).toEqual([1]);
    },
  );
});
