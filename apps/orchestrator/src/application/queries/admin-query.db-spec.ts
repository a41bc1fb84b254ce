/**
 * The admin query's read model against the migrated schema (PostgreSQL alone): every saga carries
 * the amount it asked for whatever its outcome (a declined sale keeps none in its state), and each
 * gateway request shows what the history made of it.
 */
import { randomUUID } from 'node:crypto';
import { orchestratorFixture } from '../../../test/kits/orchestrator.fixture';
import { SagaActions } from '../admin/saga-actions';
import { Clock } from '../../runtime/clock';
import { AdminQueryService } from './admin-query.service';

const AT = '2026-03-01T12:00:00.000Z';
const LATER = '2026-03-01T12:00:02.000Z';

describe('admin query (real PostgreSQL)', () => {
  const orch = orchestratorFixture({ name: 'admin_query', poolSize: 4 });
  const principal = { name: 'ann', role: 'viewer', scope: 'all' } as const;
  const query = () => new AdminQueryService(orch.database, new SagaActions([]), new Clock());

  /** A card payment the gateway declined: its state names no amount, its first event does. */
  const declinedSale = async (minor: number) => {
    const id = randomUUID();
    const requestId = randomUUID();
    const commandId = randomUUID();
    await orch.dataSource.query(
      `INSERT INTO sagas (id, flow, endpoint_id, kind, status, state, version, client_order_id)
       VALUES ($1, 'card-payment', '1111', 'sale', 'declined', $2, 2, $3)`,
      [
        id,
        {
          status: 'declined',
          currency: 'USD',
          authorized: 0,
          captured: 0,
          returned: 0,
          version: 2,
        },
        `order-${id}`,
      ],
    );
    const history = [
      { type: 'operation-requested', amount: { minor, currency: 'USD' }, at: AT },
      { type: 'accepted-by-gateway', serialNumber: 'SN-77', at: AT },
      { type: 'declined', code: '05', at: LATER },
    ];
    for (const [i, h] of history.entries()) {
      await orch.dataSource.query(
        `INSERT INTO saga_history (saga_id, version, event_id, event_type, event, command_id, occurred_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [id, i + 1, randomUUID(), h.type, { ...h, requestId, sagaId: id }, commandId, h.at],
      );
    }
    await orch.dataSource.query(
      `INSERT INTO gateway_requests (request_id, saga_id, operation, body, created_at)
       VALUES ($1, $2, 'sale', $3, $4)`,
      [requestId, id, { operation: 'sale', amount: { minor, currency: 'USD' } }, AT],
    );
    return { id, requestId };
  };

  it('finds a declined sale by the amount it asked for and names that amount', async () => {
    const sale = await declinedSale(4200);
    await declinedSale(4300);

    const page = await query().search({ minAmount: 4200, maxAmount: 4200, limit: 10 });
    const detail = await query().detail(sale.id, principal);

    expect(page.items.map((s) => [s.id, s.amount])).toEqual([
      [sale.id, { minor: 4200, currency: 'USD' }],
    ]);
    expect(detail?.saga.amount).toEqual({ minor: 4200, currency: 'USD' });
  });

  it('shows each gateway request with its answer: result, serial, code and time', async () => {
    const sale = await declinedSale(6150);

    const detail = await query().detail(sale.id, principal);

    expect(detail?.gatewayRequests.map((r) => [r.requestId, r.answer])).toEqual([
      [sale.requestId, { result: 'declined', serial: 'SN-77', code: '05', at: LATER }],
    ]);
  });

  it("reads a saga's detail in one snapshot: a unit of work committed between two of its statements is not seen, and nothing can be written", async () => {
    const { id } = await declinedSale(1_500);
    const seen = await orch.database.snapshot(async (db) => {
      const count = async () =>
        (
          await db.query<Array<{ n: number }>>(
            'SELECT count(*)::int AS n FROM saga_history WHERE saga_id = $1',
            [id],
          )
        )[0]?.n;
      const before = await count();
      // Another connection commits an event of the saga meanwhile (as a unit of work would).
      await orch.dataSource.query(
        `INSERT INTO saga_history (saga_id, version, event_id, event_type, event, command_id, occurred_at)
         SELECT saga_id, version + 10, gen_random_uuid(), event_type, event, command_id, occurred_at
           FROM saga_history WHERE saga_id = $1 ORDER BY version LIMIT 1`,
        [id],
      );
      const after = await count();
      const write = await db
        .query(`UPDATE sagas SET status = 'approved' WHERE id = $1`, [id])
        .then(() => 'written')
        .catch((error: Error) => error.message);
      return { before, after, write };
    });
    expect(seen.after).toBe(seen.before);
    expect(seen.write).toMatch(/read-only transaction/);
    // Outside it the commit is there.
    const [{ n }] = await orch.dataSource.query<Array<{ n: number }>>(
      'SELECT count(*)::int AS n FROM saga_history WHERE saga_id = $1',
      [id],
    );
    expect(n).toBe((seen.before ?? 0) + 1);
  });

  it("a saga's detail agrees with itself while a unit of work commits in the middle of reading it: the status and the history of one moment", async () => {
    const { id } = await declinedSale(2_500);
    // A unit of work holds the gateway requests (as one writing one would) while the detail
    // reads: the saga's row and history come first, then it waits for the requests.
    const unit = orch.dataSource.createQueryRunner();
    await unit.connect();
    try {
      await unit.startTransaction();
      await unit.query('LOCK TABLE gateway_requests IN ACCESS EXCLUSIVE MODE');
      const reading = query().detail(id, principal);
      await waitForLockWait('gateway_requests');
      // It moves the saga on and commits: a new status, its event and a new request.
      await unit.query(`UPDATE sagas SET status = 'approved', version = 4 WHERE id = $1`, [id]);
      await unit.query(
        `INSERT INTO saga_history (saga_id, version, event_id, event_type, event, command_id, occurred_at)
         SELECT saga_id, 4, gen_random_uuid(), 'approved', event, command_id, occurred_at
           FROM saga_history WHERE saga_id = $1 AND version = 3`,
        [id],
      );
      await unit.query(
        `INSERT INTO gateway_requests (request_id, saga_id, operation, body, created_at)
         VALUES ($1, $2, 'status', '{"operation": "status"}', $3)`,
        [randomUUID(), id, LATER],
      );
      await unit.commitTransaction();
      const detail = await reading;
      // One moment, before the commit: read apart, the requests would list the new status query
      // beside the status and history of before it.
      expect(detail?.saga.status).toBe('declined');
      expect(detail?.history.map((h) => h.type)).toEqual([
        'operation-requested',
        'accepted-by-gateway',
        'declined',
      ]);
      expect(detail?.gatewayRequests.map((r) => r.operation)).toEqual(['sale']);
    } finally {
      await unit.release();
    }
  });

  /** Until a statement of another connection waits for a lock on `table`. */
  async function waitForLockWait(table: string): Promise<void> {
    for (let i = 0; i < 200; i++) {
      const [{ waiting }] = await orch.dataSource.query<Array<{ waiting: boolean }>>(
        `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                         WHERE c.relname = $1 AND NOT l.granted) AS waiting`,
        [table],
      );
      if (waiting) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`nothing waited for a lock on ${table}`);
  }
});
