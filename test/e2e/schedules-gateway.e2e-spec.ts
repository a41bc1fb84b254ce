import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { CreateScheduleCommand, ScheduleEvent } from '@payments/contracts';
import { createTestDatabase, TestDatabase } from '@payments/testing';
import { kafkaClient, listTopics, topicEndOffsets } from '../../scripts/stack/kafka-io';
import {
  PaymentStack,
  SANDBOX_MERCHANT,
  sandboxMerchantsWithDelay,
} from '../../scripts/stack/payment-stack';
import { run } from '../../scripts/stack/processes';

/**
 * A schedule registered with the gateway (issue #12, create-recurring-payment v4) on the four
 * processes: endpoint 1113 is configured for it (SCHEDULE_GATEWAY_REGISTRATION_ENDPOINTS), so
 * the schedule is registered at the sandbox, which charges it on its own virtual clock and sends
 * callbacks; the orchestrator records each charge once, confirmed by a status query, and never
 * rebills. Judged on our own schedule id only (the stacks share consumer groups).
 */
let stack: PaymentStack;
let orchestratorDb: TestDatabase;
let adapterDb: TestDatabase;

const ENDPOINT = '1113';
const DAY = 86_400;

const base = () => ({
  commandId: randomUUID(),
  merchant: { endpointId: ENDPOINT },
  occurredAt: new Date().toISOString(),
});

const waitSchedule = (scheduleId: string, predicate: (e: ScheduleEvent) => boolean) =>
  stack.events.waitForSchedule(scheduleId, predicate, 60_000);

async function cardReference(): Promise<string> {
  const sale = stack.sale({
    cvv: '123',
    amountMinor: 1_000,
    currency: 'USD',
    endpointId: ENDPOINT,
  });
  await stack.send(sale);
  const done = await stack.events.waitForType(sale.paymentId, ['approved', 'declined', 'failed']);
  expect(done.event.type).toBe('approved');
  await stack.sendRaw({ type: 'create-card-ref', ...base(), paymentId: sale.paymentId });
  const created = await stack.events.waitForType(sale.paymentId, [
    'card-ref-created',
    'card-reference-failed',
  ]);
  if (created.event.type !== 'card-ref-created') throw new Error(JSON.stringify(created.event));
  return created.event.cardRef.refId;
}

async function sandboxPlans(): Promise<Array<Record<string, string | number>>> {
  const res = await fetch(
    `${stack.urls['gateway-sandbox']}/_sandbox/recurring?login=${SANDBOX_MERCHANT.login}`,
  );
  return (await res.json()) as Array<Record<string, string | number>>;
}

/** A callback as the gateway sends it to callback-ingest (GET, control over status+orderid+order). */
async function deliverCallback(params: Record<string, string>, control?: string): Promise<number> {
  const signed =
    control ??
    createHash('sha1')
      .update(
        `${params.status}${params.orderid}${params.merchant_order}${SANDBOX_MERCHANT.controlKey}`,
      )
      .digest('hex');
  const query = new URLSearchParams({ ...params, control: signed });
  const res = await fetch(
    `${stack.urls['callback-ingest']}/callbacks/gateway/${ENDPOINT}?${query.toString()}`,
  );
  await res.text();
  return res.status;
}

const charged = (scheduleId: string) =>
  stack.events
    .scheduleEventsOf(scheduleId)
    .filter(
      (e): e is Extract<ScheduleEvent, { type: 'gateway-cycle-charged' }> =>
        e.type === 'gateway-cycle-charged',
    );

beforeAll(async () => {
  await run('npm', ['run', '--silent', 'build']);
  orchestratorDb = await createTestDatabase('e2e_schedules_gateway_orchestrator');
  adapterDb = await createTestDatabase('e2e_schedules_gateway_adapter');
  const workDir = `${process.cwd()}/.run/schedules-gateway-${randomUUID().slice(0, 8)}`;
  mkdirSync(workDir, { recursive: true });
  const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  const probe = kafkaClient(brokers, 'e2e-schedules-gateway-start');
  await topicEndOffsets(probe, await listTopics(probe, 'payments.'));
  stack = await PaymentStack.start({
    kafkaBrokers: brokers,
    orchestratorDatabaseUrl: orchestratorDb.url,
    adapterDatabaseUrl: adapterDb.url,
    workDir,
    env: {
      'gateway-sandbox': { SANDBOX_MERCHANTS_FILE: sandboxMerchantsWithDelay(workDir, 0) },
      orchestrator: {
        TIMER_POLL_MS: '100',
        SCHEDULE_GATEWAY_REGISTRATION_ENDPOINTS: ENDPOINT,
        SCHEDULE_GATEWAY_STATUS_POLL_SECONDS: '1',
      },
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await orchestratorDb?.drop();
  await adapterDb?.drop();
});

describe('a schedule registered with the gateway', () => {
  const scheduleId = randomUUID();
  const CYCLES = 3;

  it('is registered at the sandbox, charged there every cycle, each charge recorded once, never rebilled', async () => {
    const refId = await cardReference();
    const tomorrow = new Date(Date.now() + DAY * 1000).toISOString().slice(0, 10);
    const create: CreateScheduleCommand = {
      type: 'create-schedule',
      ...base(),
      scheduleId,
      cardRef: { refId },
      amount: { minor: 1_250, currency: 'USD' },
      description: 'Daily plan at the gateway',
      rule: {
        period: 'day',
        interval: 1,
        startDate: tomorrow,
        timeOfDay: '00:00',
        timeZone: 'UTC',
        end: { kind: 'count', count: CYCLES },
      },
    };
    await stack.sendRaw(create);
    const registered = await waitSchedule(
      scheduleId,
      (e) => e.type === 'schedule-registered' || e.type === 'schedule-registration-failed',
    );
    expect(registered).toMatchObject({ type: 'schedule-registered', resolvedBy: 'reply' });
    const recurringId =
      registered.type === 'schedule-registered' ? registered.recurringPaymentId : '';
    const plan = (await sandboxPlans()).find((p) => p['merchant-order-id'] === scheduleId);
    expect(plan).toMatchObject({ 'recurring-payment-id': recurringId, charges: 0 });

    // The sandbox's clock moves a day at a time; it charges and calls back; we confirm.
    for (let cycle = 0; cycle < CYCLES; cycle += 1) {
      await stack.controls.advanceClock(DAY + (cycle === 0 ? 60 : 0));
      await waitSchedule(
        scheduleId,
        (e) => e.type === 'gateway-cycle-charged' && e.cycle === cycle,
      );
    }
    // One more day: the plan is over (3 charges), nothing more happens.
    await stack.controls.advanceClock(DAY);

    const events = stack.events.scheduleEventsOf(scheduleId);
    const charges = charged(scheduleId);
    expect(charges.map((e) => e.cycle)).toEqual([0, 1, 2]);
    expect(new Set(charges.map((e) => e.gatewayOrderId)).size).toBe(CYCLES);
    for (const e of charges) {
      expect(e.amount).toEqual({ minor: 1_250, currency: 'USD' });
      expect(e.clientOrderId).toBe(`${scheduleId}-${e.cycle + 1}`);
      // Once in the sandbox's ledger.
      const ledger = await stack.controls.ledger(e.clientOrderId);
      expect(ledger.entries.filter((m) => m.movement === 'charged')).toHaveLength(1);
      // Reported by the callback before it was confirmed by the status query.
      const reportedAt = events.findIndex(
        (r) => r.type === 'gateway-charge-reported' && r.gatewayOrderId === e.gatewayOrderId,
      );
      expect(reportedAt).toBeGreaterThanOrEqual(0);
      expect(reportedAt).toBeLessThan(events.indexOf(e));
    }
    // The orchestrator never rebilled: no cycle charge of its own, nothing under our id in the ledger.
    expect(events.filter((e) => e.type.startsWith('cycle-'))).toEqual([]);
    expect((await stack.controls.ledger(scheduleId)).entries).toEqual([]);
    expect((await sandboxPlans()).find((p) => p['merchant-order-id'] === scheduleId)).toMatchObject(
      { charges: CYCLES },
    );
  }, 240_000);

  it('a duplicated or forged callback for a charge changes nothing', async () => {
    const [first] = charged(scheduleId);
    if (first === undefined) throw new Error('the first test charged nothing');
    const before = stack.events.scheduleEventsOf(scheduleId).length;
    const genuine = {
      status: 'approved',
      merchant_order: first.clientOrderId,
      client_orderid: first.clientOrderId,
      orderid: first.gatewayOrderId,
      type: 'sale',
      amount: '12.50',
      currency: 'USD',
    };
    // The same callback again (a verified duplicate), and one with other (unsigned) fields.
    expect(await deliverCallback(genuine)).toBe(200);
    expect(await deliverCallback({ ...genuine, amount: '99.00' })).toBe(200);
    // Forged: a wrong control, and a made-up order of the schedule.
    expect(await deliverCallback(genuine, 'f'.repeat(40))).toBeGreaterThanOrEqual(400);
    expect(
      await deliverCallback(
        {
          ...genuine,
          orderid: '999999',
          merchant_order: `${scheduleId}-9`,
          client_orderid: `${scheduleId}-9`,
        },
        '0'.repeat(40),
      ),
    ).toBeGreaterThanOrEqual(400);
    // Callbacks and commands travel on different topics: give the callbacks time to arrive.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    // A command that is answered, to know the schedule's stream is flowing.
    await stack.sendRaw({ type: 'pause-schedule', ...base(), scheduleId });
    const rejected = await waitSchedule(scheduleId, (e) => e.type === 'command-rejected');
    expect(rejected).toMatchObject({
      reason: 'NOT_SUPPORTED_BY_GATEWAY',
      commandType: 'pause-schedule',
    });
    const after = stack.events.scheduleEventsOf(scheduleId);
    expect(after.slice(before).map((e) => e.type)).toEqual(['command-rejected']);
    expect(
      charged(scheduleId).filter((e) => e.gatewayOrderId === first.gatewayOrderId),
    ).toHaveLength(1);
    expect((await stack.controls.ledger(first.clientOrderId)).entries).toHaveLength(1);
  }, 120_000);
});
