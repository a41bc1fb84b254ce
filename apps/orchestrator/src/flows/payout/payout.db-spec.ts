/**
 * Payouts on the saga runtime against PostgreSQL alone (no broker): the real flows, the contract
 * command catalogue, concurrent units of work. Proves at the database tier what the decider
 * properties prove in memory: the daily limit holds when approvals of many payouts are processed
 * concurrently, and one payout approved three times at once sends one payout-pay; one-step
 * payouts, payout forms and transfers draw on the same budget before their request is published.
 */
import { randomUUID } from 'node:crypto';
import type { GatewayResult } from '@payments/contracts';
import { PLACEHOLDER_SEALED_CARD } from '@payments/contracts/testing';
import { ConcurrentUpdateError } from '../../persistence/saga.repository';
import { cardPaymentFlow } from '../card-payment/card-payment.flow';
import { DEFAULT_POLICY } from '../card-payment/domain';
import { payoutBudgetFlow } from '../payout-budget/payout-budget.flow';
import { transferFlow } from '../transfer/transfer.flow';
import { type PayoutPolicy } from './domain';
import { payoutBudgetId } from '../payout-budget/domain';
import { payoutFlow } from './payout.flow';
import { orchestratorFixture } from '../../../test/kits/orchestrator.fixture';

const ENDPOINT = '4321';
const DAILY_LIMIT = 100_000;
const POLICY: PayoutPolicy = {
  limits: { default: { dailyLimitMinor: DAILY_LIMIT, approvalWindowMs: 600_000 } },
  maxSendAttempts: 3,
  unknownAlertAfterMs: 3_600_000,
  neverReceivedAfterMs: 60_000,
  ownLimitWaitMs: 600_000,
};

describe('payouts and transfers on the saga runtime (real PostgreSQL, no broker)', () => {
  const orch = orchestratorFixture({
    name: 'payouts',
    poolSize: 8,
    start: '2026-05-01T09:00:00.000Z',
    flows: [
      cardPaymentFlow(DEFAULT_POLICY),
      payoutFlow(POLICY),
      payoutBudgetFlow(POLICY),
      transferFlow(POLICY),
    ],
  });
  const { clock } = orch;

  /** As the Kafka consumer does: a unit of work that lost a race is redelivered (bounded). */
  async function command(raw: object): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await orch.runtime.handleCommand(raw, {});
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
    orch.dataSource.query<Array<{ request_id: string }>>(
      `SELECT request_id FROM gateway_requests WHERE saga_id = $1 AND operation = $2`,
      [payoutId, operation],
    );

  const status = async (id: string) =>
    (
      await orch.dataSource.query<Array<{ status: string }>>(
        `SELECT status FROM sagas WHERE id = $1`,
        [id],
      )
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
    await orch.runtime.handleGatewayResult(result, {});
    expect(await status(payoutId)).toBe('registered');
    return payoutId;
  }

  const approve = (payoutId: string) =>
    command({ type: 'approve-payout', ...base(payoutId), approvedBy: 'finance' });

  /**
   * The day's limit held for money-out requests of `amounts` of which `sent[i]` were published:
   * each at most once, no more than the limit in all, nothing refused that would have fitted
   * (every refused one is larger than what was left), and the day's budget reserved exactly
   * what was sent.
   */
  async function expectWithinTheDay(amounts: number[], sent: number[]): Promise<void> {
    const total = amounts.reduce((sum, minor, i) => sum + (sent[i] ?? 0) * minor, 0);
    expect(sent.every((n) => n <= 1)).toBe(true);
    expect(total).toBeLessThanOrEqual(DAILY_LIMIT);
    const left = DAILY_LIMIT - total;
    amounts.forEach((minor, i) => {
      if (sent[i] === 0) expect(minor).toBeGreaterThan(left);
    });
    const budgetId = payoutBudgetId(ENDPOINT, 'EUR', clock.iso().slice(0, 10));
    const [budget] = await orch.dataSource.query<Array<{ state: { reservedMinor: number } }>>(
      `SELECT state FROM sagas WHERE id = $1`,
      [budgetId],
    );
    expect(budget?.state.reservedMinor).toBe(total);
  }

  it('the daily limit holds for approvals of many payouts processed concurrently', async () => {
    const amounts = [30_000, 30_000, 30_000, 30_000, 20_000, 20_000, 10_000, 10_000];
    const ids = await Promise.all(amounts.map((minor) => registered(minor)));
    await Promise.all(ids.map((id) => approve(id)));
    const paid = await Promise.all(
      ids.map(async (id) => (await requests(id, 'payout-pay')).length),
    );
    await expectWithinTheDay(amounts, paid);
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
    const rejections = await orch.dataSource.query<Array<{ reason: string }>>(
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
    const [rejection] = await orch.dataSource.query<Array<{ reason: string }>>(
      `SELECT payload->>'reason' AS reason FROM outbox
        WHERE aggregate_id = $1 AND payload->>'type' = 'payout-command-rejected'`,
      [id],
    );
    expect(rejection?.reason).toBe('INTERNAL_COMMAND');
  });

  /** Gateway requests of a saga published (outbox rows on the requests topic), by operation. */
  const published = async (sagaId: string) =>
    (
      await orch.dataSource.query<Array<{ operation: string }>>(
        `SELECT payload->>'operation' AS operation FROM outbox
          WHERE aggregate_id = $1 AND topic = 'payments.gateway.requests.v1' ORDER BY sequence`,
        [sagaId],
      )
    ).map((r) => r.operation);

  const eventsOf = async (sagaId: string) =>
    orch.dataSource.query<Array<{ type: string; reason: string | null }>>(
      `SELECT payload->>'type' AS type, payload->>'reason' AS reason FROM outbox
        WHERE aggregate_id = $1 AND topic = 'payments.events.v1' ORDER BY sequence`,
      [sagaId],
    );

  /** Rows of the saga still holding a sealed card (stored requests, outbox payloads). */
  const sealedCards = async (sagaId: string) =>
    Number(
      (
        await orch.dataSource.query<Array<{ n: string }>>(
          `SELECT (SELECT count(*) FROM gateway_requests WHERE saga_id::text = $1 AND body ?| $2::text[])
                + (SELECT count(*) FROM outbox WHERE aggregate_id = $1 AND payload ?| $2::text[]) AS n`,
          [sagaId, ['sealedCard', 'sealedDestinationCard']],
        )
      )[0]?.n ?? -1,
    );

  const oneStep = (type: 'payout' | 'payout-v4', minor: number) => {
    const payoutId = randomUUID();
    return {
      id: payoutId,
      raw: {
        type,
        ...base(payoutId),
        amount: { minor, currency: 'EUR' },
        sealedCard: PLACEHOLDER_SEALED_CARD,
      },
    };
  };

  const form = (minor: number) => {
    const payoutId = randomUUID();
    return {
      id: payoutId,
      raw: {
        type: 'payout-form',
        ...base(payoutId),
        amount: { minor, currency: 'EUR' },
        redirectUrl: 'https://shop.example/payout/done',
      },
    };
  };

  const transfer = (minor: number) => {
    const transferId = randomUUID();
    return {
      id: transferId,
      raw: {
        type: 'transfer',
        commandId: randomUUID(),
        transferId,
        merchant: { endpointId: ENDPOINT },
        occurredAt: clock.now().toISOString(),
        amount: { minor, currency: 'EUR' },
        sealedCard: PLACEHOLDER_SEALED_CARD,
        sealedDestinationCard: PLACEHOLDER_SEALED_CARD,
      },
    };
  };

  it('three one-step payouts of 40,000 under 100,000: two published, the third refused with its request never published', async () => {
    clock.at = new Date('2026-05-04T09:00:00.000Z');
    const [a, b, c] = [oneStep('payout', 40_000), oneStep('payout-v4', 40_000), form(40_000)];
    for (const p of [a, b, c]) await command(p.raw);
    expect(await published(a.id)).toEqual(['payout']);
    expect(await published(b.id)).toEqual(['payout-v4']);
    expect(await published(c.id)).toEqual([]);
    expect(await status(c.id)).toBe('refused');
    expect(await eventsOf(c.id)).toEqual([
      { type: 'payout-requested', reason: null },
      { type: 'payout-refused', reason: 'DAILY_PAYOUT_LIMIT_EXCEEDED' },
    ]);
    // A transfer of the same endpoint and day draws on the same budget: 20,000 fit, 20,001 not.
    const fits = transfer(20_000);
    const over = transfer(1);
    await command(fits.raw);
    await command(over.raw);
    expect(await published(fits.id)).toEqual(['transfer']);
    expect(await published(over.id)).toEqual([]);
    expect(await status(over.id)).toBe('refused');
    expect((await eventsOf(over.id)).map((e) => e.type)).toEqual([
      'transfer-requested',
      'transfer-refused',
    ]);
    // Refused and settled: the held request's sealed cards are purged.
    expect(await sealedCards(over.id)).toBe(0);
  });

  it('one-step payouts, payout forms and transfers processed concurrently never publish more than the day allows', async () => {
    clock.at = new Date('2026-05-05T09:00:00.000Z');
    const ops = [
      oneStep('payout', 30_000),
      oneStep('payout-v4', 30_000),
      form(30_000),
      transfer(30_000),
      oneStep('payout', 20_000),
      transfer(20_000),
      form(10_000),
      oneStep('payout-v4', 10_000),
    ];
    await Promise.all(ops.map((op) => command(op.raw)));
    const sent = await Promise.all(ops.map(async (op) => (await published(op.id)).length));
    const amounts = ops.map((op) => op.raw.amount.minor);
    await expectWithinTheDay(amounts, sent);
    const statuses = await Promise.all(ops.map((op) => status(op.id)));
    expect(statuses.filter((s) => s === 'refused')).toHaveLength(
      sent.filter((n) => n === 0).length,
    );
  });

  it('a declined one-step payout releases its reservation: the amount is free again', async () => {
    clock.at = new Date('2026-05-06T09:00:00.000Z');
    const first = oneStep('payout', 90_000);
    await command(first.raw);
    const [request] = await requests(first.id, 'payout');
    await orch.runtime.handleGatewayResult(
      {
        requestId: request?.request_id ?? '',
        paymentId: first.id,
        operation: 'payout',
        attempt: 1,
        result: { kind: 'accepted', report: { status: 'declined', errorCode: '116' } },
        completedAt: clock.now().toISOString(),
      },
      {},
    );
    expect(await status(first.id)).toBe('declined');
    const next = transfer(90_000);
    await command(next.raw);
    expect(await published(next.id)).toEqual(['transfer']);
  });
});
