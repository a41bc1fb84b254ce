/**
 * The hand-off rows against PostgreSQL: an attempt is handed off once; a live owner's renewed
 * lease keeps its rows from the sweep; rows of an owner that stopped renewing are answered once,
 * by one of two sweeping replicas, and an answer that fails leaves them for the next sweep.
 */
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { createDataSource, runMigrations } from '@payments/database';
import { createTestDatabase, type TestDatabase } from '@payments/testing';
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
    handoffs = new RequestHandoffs(dataSource);
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

  const sweepAll = async (into: HandoffRecord[]) =>
    handoffs.sweep(100, (r) => {
      into.push(r);
      return Promise.resolve();
    });

  it('hands an attempt off once; another attempt of the request is its own hand-off', async () => {
    const sale = record();
    expect(await handoffs.accept(sale, 'replica-a', 10_000)).toBe(true);
    expect(await handoffs.accept(sale, 'replica-b', 10_000)).toBe(false);
    expect(await handoffs.accept({ ...sale, attempt: 2 }, 'replica-b', 10_000)).toBe(true);
    await handoffs.finish(sale.requestId, 1);
    expect(await handoffs.accept(sale, 'replica-b', 10_000)).toBe(true);
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
});
