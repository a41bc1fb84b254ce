/**
 * The two-step payout on the saga runtime against PostgreSQL alone (no broker): the real flows,
 * the contract command catalogue, concurrent units of work. Proves at the database tier what the
 * decider properties prove in memory: the daily limit holds when approvals of many payouts are
 * processed concurrently, and one payout approved three times at once sends one payout-pay.
 */
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import type { GatewayResult } from '@payments/contracts';
import { PLACEHOLDER_SEALED_CARD } from '@payments/contracts/testing';
import { createDataSource, runMigrations } from '@payments/database';
import { createTestDatabase, type TestDatabase } from '@payments/testing';
import { orchestratorMigrations } from '../../migrations';
import { OutboxWriter } from '../../outbox/outbox.writer';
import { Database } from '../../persistence/database';
import { orchestratorEntities } from '../../persistence/entities';
import { ConcurrentUpdateError, SagaRepository } from '../../persistence/saga.repository';
import { TimerRepository } from '../../persistence/timer.repository';
import { Clock, IdGenerator } from '../../runtime/clock';
import { SagaRuntime } from '../../runtime/saga-runtime';
import { cardPaymentFlow } from '../card-payment/card-payment.flow';
import { DEFAULT_POLICY } from '../card-payment/domain';
import { contractCommands } from '../command-catalogue';
import { payoutBudgetFlow } from '../payout-budget/payout-budget.flow';
import { payoutBudgetId, type PayoutPolicy } from './domain';
import { payoutFlow } from './payout.flow';

const ENDPOINT = '4321';
const DAILY_LIMIT = 100_000;
const POLICY: PayoutPolicy = {
  limits: { default: { dailyLimitMinor: DAILY_LIMIT, approvalWindowMs: 600_000 } },
  maxSendAttempts: 3,
  unknownAlertAfterMs: 3_600_000,
  neverReceivedAfterMs: 60_000,
  ownLimitWaitMs: 600_000,
};

class MovableClock extends Clock {
  at = new Date('2026-05-01T09:00:00.000Z');
  override now(): Date {
    return new Date(this.at);
  }
}

describe('two-step payout on the saga runtime (real PostgreSQL, no broker)', () => {
  let db: TestDatabase;
  let dataSource: DataSource;
  let runtime: SagaRuntime;
  const clock = new MovableClock();

  beforeAll(async () => {
    db = await createTestDatabase('orch_payouts');
    dataSource = createDataSource({
      url: db.url,
      poolSize: 8,
      migrations: orchestratorMigrations,
      entities: orchestratorEntities,
      applicationName: 'orchestrator-payout-test',
    });
    await runMigrations(dataSource, { info: () => undefined });
    runtime = new SagaRuntime(
      new Database(dataSource),
      new SagaRepository(),
      new OutboxWriter(),
      new TimerRepository(),
      clock,
      new IdGenerator(),
      [cardPaymentFlow(DEFAULT_POLICY), payoutFlow(POLICY), payoutBudgetFlow(POLICY)],
      contractCommands,
      { hintIntervalMs: 60_000 },
    );
  });

  afterAll(async () => {
    try {
      if (dataSource?.isInitialized) await dataSource.destroy();
    } finally {
      await db?.drop();
    }
  });

  /** As the Kafka consumer does: a unit of work that lost a race is redelivered (bounded). */
  async function command(raw: object): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await runtime.handleCommand(raw, {});
      } catch (error) {
        if (!(error instanceof ConcurrentUpdateError) || attempt >= 5) throw error;
      }
    }
  }

  const base = (payoutId: string) => ({
    commandId: randomUUID(),
    payoutId,
    merchant: { endpointId: ENDPOINT },
    occurredAt: clock.now().toISOString(),
  });

  const requests = (payoutId: string, operation: string) =>
    dataSource.query<Array<{ request_id: string }>>(
      `SELECT request_id FROM gateway_requests WHERE saga_id = $1 AND operation = $2`,
      [payoutId, operation],
    );

  const status = async (id: string) =>
    (
      await dataSource.query<Array<{ status: string }>>(`SELECT status FROM sagas WHERE id = $1`, [
        id,
      ])
    )[0]?.status;

  /** payout-check sent and approved by the gateway in its reply: registered. */
  async function registered(minor: number): Promise<string> {
    const payoutId = randomUUID();
    await command({
      type: 'payout-check',
      ...base(payoutId),
      amount: { minor, currency: 'EUR' },
      sealedCard: PLACEHOLDER_SEALED_CARD,
    });
    const [check] = await requests(payoutId, 'payout-check');
    const result: GatewayResult = {
      requestId: check?.request_id ?? '',
      paymentId: payoutId,
      operation: 'payout-check',
      attempt: 1,
      result: {
        kind: 'accepted',
        gatewayOrderId: `G${minor}`,
        report: { status: 'approved', gatewayOrderId: `G${minor}` },
      },
      completedAt: clock.now().toISOString(),
    };
    await runtime.handleGatewayResult(result, {});
    expect(await status(payoutId)).toBe('registered');
    return payoutId;
  }

  const approve = (payoutId: string) =>
    command({ type: 'approve-payout', ...base(payoutId), approvedBy: 'finance' });

  it('the daily limit holds for approvals of many payouts processed concurrently', async () => {
    const amounts = [30_000, 30_000, 30_000, 30_000, 20_000, 20_000, 10_000, 10_000];
    const ids = await Promise.all(amounts.map((minor) => registered(minor)));
    await Promise.all(ids.map((id) => approve(id)));
    const paid = await Promise.all(
      ids.map(async (id) => (await requests(id, 'payout-pay')).length),
    );
    const sent = amounts.reduce((sum, minor, i) => sum + (paid[i] ?? 0) * minor, 0);
    expect(paid.every((n) => n <= 1)).toBe(true);
    expect(sent).toBeLessThanOrEqual(DAILY_LIMIT);
    // Nothing refused that would have fitted: every refused payout is larger than what was left.
    const left = DAILY_LIMIT - sent;
    amounts.forEach((minor, i) => {
      if (paid[i] === 0) expect(minor).toBeGreaterThan(left);
    });
    const budgetId = payoutBudgetId(ENDPOINT, 'EUR', clock.now().toISOString().slice(0, 10));
    const [budget] = await dataSource.query<Array<{ state: { reservedMinor: number } }>>(
      `SELECT state FROM sagas WHERE id = $1`,
      [budgetId],
    );
    expect(budget?.state.reservedMinor).toBe(sent);
    const refused = await Promise.all(ids.map((id) => status(id)));
    expect(refused.filter((s) => s === 'registered')).toHaveLength(
      paid.filter((n) => n === 0).length,
    );
  });

  it('one payout approved three times at once sends one payout-pay; the others are refused', async () => {
    clock.at = new Date('2026-05-02T09:00:00.000Z');
    const id = await registered(5_000);
    await Promise.all([approve(id), approve(id), approve(id)]);
    expect(await requests(id, 'payout-pay')).toHaveLength(1);
    const rejections = await dataSource.query<Array<{ reason: string }>>(
      `SELECT payload->>'reason' AS reason FROM outbox
        WHERE aggregate_id = $1 AND payload->>'type' = 'payout-command-rejected'`,
      [id],
    );
    expect(rejections.map((r) => r.reason)).toEqual([
      'PAYOUT_ALREADY_APPROVED',
      'PAYOUT_ALREADY_APPROVED',
    ]);
  });

  it('refuses an internal budget answer sent on the commands topic (INTERNAL_COMMAND), paying nothing', async () => {
    clock.at = new Date('2026-05-03T09:00:00.000Z');
    const id = await registered(5_000);
    await command({
      type: 'payout-budget-answer',
      ...base(id),
      budgetId: randomUUID(),
      granted: true,
      reservedMinor: 0,
      limit: { minor: DAILY_LIMIT, currency: 'EUR' },
    });
    expect(await requests(id, 'payout-pay')).toHaveLength(0);
    expect(await status(id)).toBe('registered');
    const [rejection] = await dataSource.query<Array<{ reason: string }>>(
      `SELECT payload->>'reason' AS reason FROM outbox
        WHERE aggregate_id = $1 AND payload->>'type' = 'payout-command-rejected'`,
      [id],
    );
    expect(rejection?.reason).toBe('INTERNAL_COMMAND');
  });
});
