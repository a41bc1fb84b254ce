/**
 * The saga gauges' queries against the migrated schema (PostgreSQL alone): each reads what its
 * gauge says from rows shaped like the flows' own, and none reads a settled saga's state.
 */
import { randomUUID } from 'node:crypto';
import { readSagaGauges } from './saga-gauges';

const value = (
  reading: Awaited<ReturnType<typeof readSagaGauges>>,
  name: string,
  labels?: Record<string, string>,
) =>
  reading.flows[name]?.find((v) => labels === undefined || v.labels?.status === labels.status)
    ?.value;
import { orchestratorFixture } from '../../../test/kits/orchestrator.fixture';

const NOW = new Date('2026-03-01T12:00:00.000Z');
const ago = (seconds: number) => new Date(NOW.getTime() - seconds * 1000).toISOString();

describe('saga gauges (real PostgreSQL)', () => {
  const orch = orchestratorFixture({ name: 'gauges', poolSize: 2 });

  const saga = async (flow: string, status: string, state: object, timers: object = {}) => {
    const id = randomUUID();
    await orch.dataSource.query(
      `INSERT INTO sagas (id, flow, endpoint_id, kind, status, state, version)
       VALUES ($1, $2, '1111', NULL, $3, $4, 1)`,
      [id, flow, status, state],
    );
    for (const [kind, dueAt] of Object.entries(timers)) {
      await orch.dataSource.query(
        `INSERT INTO timers (flow, saga_id, kind, due_at, payload) VALUES ($1, $2, $3, $4, '{}')`,
        [flow, id, kind, dueAt],
      );
    }
  };
  const inFlight = (stage: string, unknownSince?: string, requestedAt = ago(30)) => ({
    inFlight: {
      stage,
      requestId: randomUUID(),
      requestedAt,
      ...(unknownSince ? { unknownSince } : {}),
    },
  });

  it('reads unknown outcomes, payouts awaiting approval, schedule charges due and failed', async () => {
    const polled = { 'status-poll': ago(-30) };
    // Unknown outcomes of three flows (a capture's: the payment keeps its authorized status).
    await saga(
      'card-payment',
      'outcome-unknown',
      inFlight('outcome-unknown', ago(7200), ago(7260)),
      polled,
    );
    await saga('card-payment', 'authorized', inFlight('outcome-unknown', ago(60)), polled);
    await saga('payout', 'paying', inFlight('outcome-unknown', ago(600), ago(650)), polled);
    // In flight, known; and settled sagas (no timer): not unknown.
    await saga('card-payment', 'processing', inFlight('processing'), polled);
    await saga('transfer', 'processing', inFlight('processing', undefined, ago(5)), polled);
    // A card reference asked for (the payment settled): in flight since its request.
    await saga(
      'card-payment',
      'approved',
      {
        status: 'approved',
        cardRefRequest: { operation: 'create-card-ref', requestedAt: ago(90) },
      },
      polled,
    );
    await saga('card-payment', 'approved', { status: 'approved' });
    // Payouts: two awaiting approval, one paid.
    await saga('payout', 'registered', {}, { 'approval-expiry': ago(-600) });
    await saga('payout', 'registered', {}, { 'approval-expiry': ago(-300) });
    await saga('payout', 'paid', {});
    // Schedules: two charges due (one overdue for an hour), one not yet; past due and suspended.
    await saga('recurring-schedule', 'active', {}, { charge: ago(3600) });
    await saga('recurring-schedule', 'past-due', {}, { charge: ago(1) });
    await saga('recurring-schedule', 'active', {}, { charge: ago(-86400) });
    await saga('recurring-schedule', 'past-due', {}, { charge: ago(-3600) });
    await saga('recurring-schedule', 'suspended', {});
    await saga('recurring-schedule', 'cancelled', {});

    const reading = await readSagaGauges((sql, params) => orch.dataSource.query(sql, params), NOW);
    expect({
      unknownOutcomes: reading.unknownOutcomes,
      oldestUnknownSeconds: reading.oldestUnknownSeconds,
      inFlight: reading.inFlight,
      payoutsAwaitingApproval: value(reading, 'orchestrator_payouts_awaiting_approval'),
      scheduleChargesDue: value(reading, 'orchestrator_schedule_charges_due'),
      scheduleChargesFailed: {
        'past-due': value(reading, 'orchestrator_schedule_charges_failed', { status: 'past-due' }),
        suspended: value(reading, 'orchestrator_schedule_charges_failed', { status: 'suspended' }),
      },
    }).toEqual({
      unknownOutcomes: 3,
      oldestUnknownSeconds: 7200,
      inFlight: {
        'card-payment': { count: 4, oldestSeconds: 7260 },
        payout: { count: 1, oldestSeconds: 650 },
        transfer: { count: 1, oldestSeconds: 5 },
        'recurring-schedule': { count: 0, oldestSeconds: 0 },
        'payout-budget': { count: 0, oldestSeconds: 0 },
        'pan-eligibility': { count: 0, oldestSeconds: 0 },
      },
      payoutsAwaitingApproval: 2,
      scheduleChargesDue: 2,
      scheduleChargesFailed: { 'past-due': 2, suspended: 1 },
    });
  });
});
