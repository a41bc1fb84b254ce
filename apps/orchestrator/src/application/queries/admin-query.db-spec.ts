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
  const orch = orchestratorFixture({ name: 'admin_query', poolSize: 2 });
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
});
