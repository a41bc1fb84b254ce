import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { DataSource, EntityManager } from 'typeorm';
import type { PaymentEvent } from '@payments/contracts';
import { createDataSource, runMigrations } from '@payments/database';
import { createTestDatabase, type TestDatabase } from '@payments/testing';
import { initialState } from '../flows/card-payment/domain';
import { orchestratorMigrations } from '../migrations';
import { Database } from './database';
import { orchestratorEntities } from './entities';
import { OUTBOX_CHANNEL, OutboxWriter } from '../runtime/outbox/outbox.writer';
import {
  ConcurrentUpdateError,
  type HistoryRow,
  SagaRepository,
  type SagaWrite,
} from './saga.repository';
import type { StatementPart } from './sql';
import { type TimerChange, TimerRepository } from './timer.repository';

/** The repositories' SQL (through the entities) against a migrated database. */
describe('orchestrator repositories (real PostgreSQL)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let database: Database;
  const payments = new SagaRepository();
  const outbox = new OutboxWriter();
  const timers = new TimerRepository();
  const now = new Date('2026-01-02T03:04:05.678Z');

  beforeAll(async () => {
    db = await createTestDatabase('orch_repos');
    dataSource = createDataSource({
      url: db.url,
      poolSize: 4,
      migrations: orchestratorMigrations,
      entities: orchestratorEntities,
      applicationName: 'orchestrator-repositories-test',
    });
    await runMigrations(dataSource, { info: () => undefined });
    database = new Database(dataSource);
  });

  afterAll(async () => {
    try {
      if (dataSource?.isInitialized) await dataSource.destroy();
    } finally {
      await db?.drop();
    }
  });

  const key = (sagaId: string) => ({
    flow: 'card-payment',
    sagaId,
    kind: 'status-poll',
    scope: '',
  });

  const projection = { status: 'initial', kind: null, settled: false };

  /** One decision through the runtime's one write path (no history, requests or parts unless given). */
  const decide = (
    sagaId: string,
    saga: SagaWrite,
    extra: { history?: HistoryRow[]; parts?: StatementPart[] } = {},
  ) =>
    database.transaction((tx) =>
      payments.writeDecision(
        tx,
        { sagaId, flow: 'card-payment', saga, history: extra.history ?? [], gatewayRequests: [] },
        extra.parts ?? [],
        now,
      ),
    );
  const insert = (endpointId: string): SagaWrite => ({
    op: 'insert',
    endpointId,
    next: { state: initialState, version: 0, projection },
  });

  async function newPayment(): Promise<string> {
    const id = randomUUID();
    await decide(id, insert('ep-1'));
    return id;
  }

  /** Sets `due`'s timer of `id` the way a decision does, with the input's traceparent. */
  const setTimer = (id: string, due: Date, payload: object, traceparent?: string) =>
    decide(
      id,
      { op: 'none' },
      {
        parts: [
          timers.changesPart(
            'card-payment',
            id,
            [{ op: 'set', kind: 'status-poll', at: due, payload }],
            traceparent,
          ),
        ],
      },
    );

  it('creates a payment once, locks it and saves with a version check', async () => {
    const id = await newPayment();
    // Created once: a second creation of the same id writes nothing and says so.
    await expect(decide(id, insert('ep-other'))).rejects.toBeInstanceOf(ConcurrentUpdateError);
    const row = await database.transaction((tx) => payments.lockSaga(tx, id));
    expect(row).toMatchObject({ id, version: 0, lastHintAt: null, state: { status: 'initial' } });

    const update: SagaWrite = {
      op: 'update',
      expectedVersion: 0,
      next: { state: { ...(row!.state as object), version: 2 }, version: 2, projection },
    };
    await decide(id, update);
    await expect(decide(id, update)).rejects.toBeInstanceOf(ConcurrentUpdateError);
    const [saved] = await dataSource.query<Array<{ endpoint_id: string; version: number }>>(
      `SELECT endpoint_id, version FROM sagas WHERE id = $1`,
      [id],
    );
    expect(saved).toEqual({ endpoint_id: 'ep-1', version: 2 });
    expect(await database.transaction((tx) => payments.lockSaga(tx, randomUUID()))).toBe(undefined);
  });

  it('deduplicates inbox messages', async () => {
    const messageId = randomUUID();
    const record = () => database.transaction((tx) => payments.recordInbox(tx, 'c', messageId));
    expect(await record()).toBe(true);
    expect(await record()).toBe(false);
    expect(await database.transaction((tx) => payments.recordInbox(tx, 'other', messageId))).toBe(
      true,
    );
  });

  it('numbers outbox rows in the order given and notifies the relay at commit', async () => {
    const listener = new Client({ connectionString: db.url });
    await listener.connect();
    try {
      const notified = new Promise<string>((resolve) =>
        listener.on('notification', (n) => resolve(n.channel)),
      );
      await listener.query(`LISTEN ${OUTBOX_CHANNEL}`);
      const aggregateId = randomUUID();
      const ids = [randomUUID(), randomUUID(), randomUUID()];
      await database.transaction((tx) =>
        outbox.enqueue(
          tx,
          ids.map((id, n) => ({
            id,
            topic: 't',
            key: aggregateId,
            headers: { ce_id: id },
            payload: { n },
            aggregateId,
          })),
        ),
      );
      await expect(notified).resolves.toBe(OUTBOX_CHANNEL);
      const rows = await dataSource.query<Array<{ id: string; payload: { n: number } }>>(
        `SELECT id, payload FROM outbox WHERE aggregate_id = $1 ORDER BY sequence`,
        [aggregateId],
      );
      expect(rows).toEqual(ids.map((id, n) => ({ id, payload: { n } })));
    } finally {
      await listener.end();
    }
  });

  it('returns the events of a command in version order, without id-conflict rejections', async () => {
    const id = await newPayment();
    const commandId = randomUUID();
    const event = (version: number, extra: Record<string, unknown>) =>
      ({
        paymentId: id,
        commandId,
        version,
        occurredAt: now.toISOString(),
        ...extra,
      }) as unknown as PaymentEvent;
    const conflict = event(2, { type: 'command-rejected', reason: 'DUPLICATE_COMMAND_CONFLICT' });
    const rows = [
      { eventId: randomUUID(), event: event(1, { type: 'operation-requested' }) },
      { eventId: randomUUID(), event: conflict },
      { eventId: randomUUID(), event: event(3, { type: 'command-rejected', reason: 'X' }) },
    ];
    const update: SagaWrite = {
      op: 'update',
      expectedVersion: 0,
      next: { state: initialState, version: 3, projection },
    };
    await decide(id, update, { history: rows });
    const found = await database.transaction((tx) => payments.eventsOfCommand(tx, commandId));
    expect(found).toEqual([rows[0], rows[2]].map((r) => ({ sagaId: id, ...r })));
  });

  it("keeps one timer per operation: a second operation's timer of the same kind never replaces the first's", async () => {
    const id = await newPayment();
    const later = new Date(now.getTime() + 60_000);
    const change = (changes: TimerChange[]) =>
      decide(id, { op: 'none' }, { parts: [timers.changesPart('card-payment', id, changes)] });
    const stored = () =>
      dataSource.query<Array<{ kind: string; scope: string; due_at: Date }>>(
        `SELECT kind, scope, due_at FROM timers WHERE saga_id = $1 ORDER BY kind, scope`,
        [id],
      );
    // A capture held back, then a card reference held back: both resends stay.
    await change([
      {
        op: 'set',
        kind: 'gateway-resend',
        scope: 'r-capture',
        at: later,
        payload: { requestId: 'r-capture' },
      },
    ]);
    await change([
      {
        op: 'set',
        kind: 'gateway-resend',
        scope: 'r-card-ref',
        at: later,
        payload: { requestId: 'r-card-ref' },
      },
      { op: 'set', kind: 'hold-expiry', at: later, payload: {} },
    ]);
    expect(await stored()).toEqual([
      { kind: 'gateway-resend', scope: 'r-capture', due_at: later },
      { kind: 'gateway-resend', scope: 'r-card-ref', due_at: later },
      { kind: 'hold-expiry', scope: '', due_at: later },
    ]);
    // Brought forward: only the resend of that very request.
    await change([{ op: 'advance', kind: 'gateway-resend', at: now, requestId: 'r-card-ref' }]);
    expect((await stored()).map((t) => t.due_at)).toEqual([later, now, later]);
    // One cancelled by its scope; then a whole kind cancelled, a timer of it set after the cancel.
    await change([{ op: 'cancel', kind: 'gateway-resend', scope: 'r-card-ref' }]);
    expect((await stored()).map((t) => t.scope)).toEqual(['r-capture', '']);
    await change([
      { op: 'cancel', kind: 'gateway-resend' },
      {
        op: 'set',
        kind: 'gateway-resend',
        scope: 'r-capture',
        at: later,
        payload: { requestId: 'r-capture' },
      },
      { op: 'cancel', kind: 'hold-expiry' },
    ]);
    expect(await stored()).toEqual([{ kind: 'gateway-resend', scope: 'r-capture', due_at: later }]);
  });

  it('claims a due timer once, even with two workers at the same time', async () => {
    const id = await newPayment();
    const due = new Date(now.getTime() - 1000);
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await setTimer(id, due, { a: 1 });
    await database.transaction((tx) => timers.postponeTimer(tx, key(id), due));
    await database.transaction((tx) => timers.postponeTimer(tx, key(id), due));
    // Set again: payload, due time and trace replaced, attempts back to 0.
    await setTimer(id, due, { a: 2 }, traceparent);
    const claimDue = (tx: EntityManager) =>
      timers
        .nextDueTimer(tx, now)
        .then((next) => (next === undefined ? undefined : timers.claimTimer(tx, next, now)));

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = database.transaction(async (tx) => {
      const claimed = await claimDue(tx);
      await held; // keeps the row locked while the second worker looks
      return claimed;
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = await database.transaction((tx) => claimDue(tx));
    release();
    expect(second).toBeUndefined();
    expect(await first).toEqual({
      flow: 'card-payment',
      sagaId: id,
      kind: 'status-poll',
      scope: '',
      dueAt: due,
      payload: { a: 2 },
      attempts: 0,
      traceparent,
    });
    expect(await database.transaction((tx) => claimDue(tx))).toBeUndefined();
  });
});
