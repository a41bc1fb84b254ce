/**
 * The hand-off rows against PostgreSQL: an attempt is handed off once; a live owner's renewed
 * lease keeps its rows from the sweep; rows of an owner that stopped renewing are answered once,
 * by one of two sweeping replicas, and an answer that fails leaves them for the next sweep;
 * answers finishing together are removed by one statement, each only its own row; a hand-off
 * that claims writes the sent-requests row in the same statement, with the ledger's answer.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import type { DataSource } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { createDataSource, runMigrations } from '@payments/database';
import { createTestDatabase, type TestDatabase } from '@payments/testing';
import { handoffSettings } from '../config';
import { adapterMigrations } from '../migrations';
import { type HandoffRecord, RequestHandoffs } from './request-handoffs';

describe('request hand-offs (real PostgreSQL)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let handoffs: RequestHandoffs;

  beforeAll(async () => {
    db = await createTestDatabase('adapter_handoffs');
    dataSource = createDataSource({
      url: db.url,
      poolSize: 4,
      migrations: adapterMigrations,
      entities: [],
      applicationName: 'adapter-handoffs-test',
    });
    await runMigrations(dataSource, { info: () => undefined });
    handoffs = new RequestHandoffs(dataSource, handoffSettings());
  });

  afterAll(async () => {
    await dataSource?.destroy();
    await db?.drop();
  });

  beforeEach(async () => {
    await dataSource.query('DELETE FROM adapter_request_handoffs');
  });

  const record = (over: Partial<HandoffRecord> = {}): HandoffRecord => ({
    requestId: randomUUID(),
    attempt: 1,
    paymentId: randomUUID(),
    operation: 'sale',
    endpointId: '1213',
    headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    ...over,
  });

  /**
   * The text of every statement `work` sent, prepared on the pool or through TypeORM (the real
   * queries run; they are only recorded).
   */
  const statementsDuring = async (work: () => Promise<unknown>): Promise<string[]> => {
    const pool = (dataSource.driver as PostgresDriver).master as Pool;
    const prepared = jest.spyOn(pool, 'query');
    const typeorm = jest.spyOn(dataSource, 'query');
    try {
      await work();
      return [
        ...prepared.mock.calls.map(([config]) =>
          typeof config === 'string' ? config : (config as { text: string }).text,
        ),
        ...typeorm.mock.calls.map(([sql]) => sql),
      ];
    } finally {
      prepared.mockRestore();
      typeorm.mockRestore();
    }
  };

  const ledgerRows = (requestId: string) =>
    dataSource.query<Array<{ attempt: number; client_order_id: string; deliberate: boolean }>>(
      `SELECT attempt, client_order_id, deliberate FROM adapter_sent_requests
        WHERE request_id = $1 ORDER BY attempt`,
      [requestId],
    );

  const sweepAll = async (into: HandoffRecord[]) =>
    handoffs.sweep(100, (r) => {
      into.push(r);
      return Promise.resolve();
    });

  it('hands an attempt off once; another attempt of the request is its own hand-off', async () => {
    const sale = record();
    const handedOff = async (r: HandoffRecord, owner: string) =>
      (await handoffs.accept(r, owner, 10_000)).handedOff;
    expect(await handedOff(sale, 'replica-a')).toBe(true);
    expect(await handedOff(sale, 'replica-b')).toBe(false);
    expect(await handedOff({ ...sale, attempt: 2 }, 'replica-b')).toBe(true);
    await handoffs.finish(sale.requestId, 1);
    expect(await handedOff(sale, 'replica-b')).toBe(true);
    // Without a claim the ledger is not touched.
    expect(await ledgerRows(sale.requestId)).toEqual([]);
  });

  it("claims with the hand-off in one statement: the ledger's answer, and never for a redelivery still handed off", async () => {
    const sale = record();
    const claim = (attempt: number, afterNoTrace = false) => ({
      record: {
        requestId: sale.requestId,
        attempt,
        operation: 'sale',
        paymentId: sale.paymentId,
        endpointId: '1213',
        clientOrderId: 'order-1',
      },
      options: { afterNoTrace },
    });
    const accept = (attempt: number, afterNoTrace = false) =>
      handoffs.accept({ ...sale, attempt }, 'owner', 10_000, claim(attempt, afterNoTrace));
    let first: unknown;
    const statements = await statementsDuring(async () => {
      first = await accept(1);
    });
    expect({ first, statements: statements.length }).toEqual({
      first: { handedOff: true, claimed: true },
      statements: 1,
    });
    // A redelivery while the attempt is handed off: neither row written again.
    expect(await accept(1)).toEqual({ handedOff: false, claimed: false });
    // Redelivered after it was answered: a new hand-off, but the claim is refused (it may be sent).
    await handoffs.finish(sale.requestId, 1);
    expect(await accept(1)).toEqual({ handedOff: true, claimed: false });
    // Another attempt while the first is in the ledger: refused; the deliberate resend passes once.
    expect(await accept(2)).toEqual({ handedOff: true, claimed: false });
    expect(await accept(3, true)).toEqual({ handedOff: true, claimed: true });
    await handoffs.finish(sale.requestId, 3);
    expect(await accept(3, true)).toEqual({ handedOff: true, claimed: false });
    expect(await ledgerRows(sale.requestId)).toEqual([
      { attempt: 1, client_order_id: 'order-1', deliberate: false },
      { attempt: 3, client_order_id: 'order-1', deliberate: true },
    ]);
  });

  it('sweeps only rows whose lease ran out, answering each with what its result needs', async () => {
    const live = record();
    const status = record({ operation: 'status', subjectRequestId: randomUUID() });
    const dead = record();
    await handoffs.accept(live, 'alive', 10_000);
    await handoffs.accept(status, 'dead', 1);
    await handoffs.accept(dead, 'dead', 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const answered: HandoffRecord[] = [];
    expect(await sweepAll(answered)).toBe(2);
    expect(answered.map((r) => r.requestId).sort()).toEqual(
      [status.requestId, dead.requestId].sort(),
    );
    expect(answered.find((r) => r.requestId === status.requestId)).toEqual(status);
    expect(answered.find((r) => r.requestId === dead.requestId)).toEqual(dead);
    // Answered once: gone after the sweep; the live row stays.
    expect(await sweepAll([])).toBe(0);
    const left: Array<{ request_id: string }> = await dataSource.query(
      'SELECT request_id FROM adapter_request_handoffs',
    );
    expect(left.map((r) => r.request_id)).toEqual([live.requestId]);
  });

  it("renewing keeps the owner's rows from the sweep; another owner cannot renew them", async () => {
    const mine = record();
    await handoffs.accept(mine, 'owner', 50);
    const renewer = setInterval(
      () => void handoffs.renew('owner', [{ requestId: mine.requestId, attempt: 1 }], 50),
      10,
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(await sweepAll([])).toBe(0);
    clearInterval(renewer);
    await handoffs.renew('someone-else', [{ requestId: mine.requestId, attempt: 1 }], 60_000);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const answered: HandoffRecord[] = [];
    expect(await sweepAll(answered)).toBe(1);
    expect(answered.map((r) => r.requestId)).toEqual([mine.requestId]);
  });

  it('fences a call: only the owner of a live lease may send; never once its lease ran out or the sweep answered it', async () => {
    const live = record();
    await handoffs.accept(live, 'owner', 10_000);
    expect(await handoffs.fence(live.requestId, 1, 'someone-else', 10_000)).toBe(false);
    expect(await handoffs.fence(live.requestId, 1, 'owner', 10_000)).toBe(true);
    // A stalled owner: its lease ran out (a lease already over when written), not swept yet.
    const stalled = record();
    await handoffs.accept(stalled, 'owner', -1_000);
    expect(await handoffs.fence(stalled.requestId, 1, 'owner', 10_000)).toBe(false);
    // Swept (answered unknown, removed): still no.
    expect(await sweepAll([])).toBe(1);
    expect(await handoffs.fence(stalled.requestId, 1, 'owner', 10_000)).toBe(false);
    // A fence that passed extended the lease: the sweep leaves the live row alone.
    expect(await sweepAll([])).toBe(0);
  });

  it('a sweep holding the row: the fence waits for it and then refuses', async () => {
    const stalled = record();
    await handoffs.accept(stalled, 'owner', -1_000);
    let fenced: Promise<boolean> | undefined;
    await handoffs.sweep(10, async () => {
      // The answer is being published while the sweep holds the row's lock.
      fenced = handoffs.fence(stalled.requestId, 1, 'owner', 10_000);
      await new Promise((resolve) => setImmediate(resolve));
    });
    expect(await fenced).toBe(false);
  });

  it('knows an attempt taken: handed off, or in the sent-requests ledger', async () => {
    const handed = record();
    await handoffs.accept(handed, 'owner', 10_000);
    expect(await handoffs.taken(handed.requestId, 1)).toBe(true);
    expect(await handoffs.taken(handed.requestId, 2)).toBe(false);
    const sent = record();
    await dataSource.query(
      `INSERT INTO adapter_sent_requests
         (request_id, attempt, operation, payment_id, endpoint_id, client_order_id, deliberate)
       VALUES ($1, 1, 'sale', $2, '1213', 'order-1', false)`,
      [sent.requestId, sent.paymentId],
    );
    expect(await handoffs.taken(sent.requestId, 1)).toBe(true);
    expect(await handoffs.taken(randomUUID(), 1)).toBe(false);
  });

  it('two replicas sweeping at once answer each row once; a failed answer leaves it for the next sweep', async () => {
    const rows = Array.from({ length: 20 }, () => record());
    for (const r of rows) await handoffs.accept(r, 'dead', 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const answered: string[] = [];
    const slowAnswer = async (r: HandoffRecord) => {
      answered.push(r.requestId);
      await new Promise((resolve) => setTimeout(resolve, 5));
    };
    await Promise.all([handoffs.sweep(100, slowAnswer), handoffs.sweep(100, slowAnswer)]);
    expect(answered.sort()).toEqual(rows.map((r) => r.requestId).sort());

    const failing = record();
    await handoffs.accept(failing, 'dead', 1);
    await new Promise((resolve) => setTimeout(resolve, 20));
    await expect(
      handoffs.sweep(100, () => Promise.reject(new Error('broker unavailable'))),
    ).rejects.toThrow('broker unavailable');
    const again: HandoffRecord[] = [];
    expect(await sweepAll(again)).toBe(1);
    expect(again.map((r) => r.requestId)).toEqual([failing.requestId]);
  });

  const rowsLeft = async (): Promise<string[]> =>
    (
      await dataSource.query<Array<{ request_id: string }>>(
        'SELECT request_id FROM adapter_request_handoffs',
      )
    )
      .map((r) => r.request_id)
      .sort();

  /** How many DELETE statements `work` sent (the real queries run; they are only counted). */
  const deletesDuring = async (work: () => Promise<unknown>): Promise<number> =>
    (await statementsDuring(work)).filter((sql) => /^\s*DELETE/i.test(sql)).length;

  it('answers finishing while a removal is in flight go together in one statement, each removing only its own row', async () => {
    const answered = Array.from({ length: 20 }, () => record());
    const open = record();
    for (const r of [...answered, open]) await handoffs.accept(r, 'owner', 10_000);
    const deletes = await deletesDuring(() =>
      Promise.all(answered.map((r) => handoffs.finish(r.requestId, r.attempt))),
    );
    // The first alone (nothing was in flight), the other 19 together once it committed.
    expect(deletes).toBe(2);
    expect(await rowsLeft()).toEqual([open.requestId]);

    const one = new RequestHandoffs(
      dataSource,
      handoffSettings({ GATEWAY_HANDOFF_FINISH_BATCH: '1' }),
    );
    const more = Array.from({ length: 5 }, () => record());
    for (const r of more) await one.accept(r, 'owner', 10_000);
    expect(
      await deletesDuring(() => Promise.all(more.map((r) => one.finish(r.requestId, 1)))),
    ).toBe(5);
    expect(await rowsLeft()).toEqual([open.requestId]);
  });

  it('a removal that fails rejects every finish waiting on it and leaves their rows; the next one removes its own', async () => {
    const first = record();
    const waiting = [record(), record()];
    for (const r of [first, ...waiting]) await handoffs.accept(r, 'owner', 10_000);
    // The fault lands on the statement the waiting two share: an id PostgreSQL cannot read fails it.
    const outcomes = await Promise.allSettled([
      handoffs.finish(first.requestId, 1),
      handoffs.finish(waiting[0].requestId, 1),
      handoffs.finish('not-a-uuid', 1),
      handoffs.finish(waiting[1].requestId, 1),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'rejected',
      'rejected',
      'rejected',
    ]);
    expect(await rowsLeft()).toEqual(waiting.map((r) => r.requestId).sort());
    await handoffs.finish(waiting[0].requestId, 1);
    expect(await rowsLeft()).toEqual([waiting[1].requestId]);
  });
});
