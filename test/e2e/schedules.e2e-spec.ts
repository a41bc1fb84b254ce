import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type {
  CreateScheduleCommand,
  PaymentEvent,
  RebillCommand,
  ScheduleEvent,
} from '@payments/contracts';
import { auditCardData, formatAudit } from '../../scripts/stack/card-data-audit';
import { kafkaClient, listTopics, topicEndOffsets } from '../../scripts/stack/kafka-io';
import {
  PaymentStack,
  SANDBOX_MERCHANT,
  sandboxMerchantsWithDelay,
} from '../../scripts/stack/payment-stack';
import { type E2eStack, startE2eStack } from '../support/e2e-stack';

/**
 * Card references, rebill and recurring schedules end to end: the sandbox, the
 * gateway-adapter, callback-ingest and the orchestrator as separate processes on the real broker
 * and PostgreSQL. The orchestrator runs with TEST_CONTROLS_ENABLED: its clock is moved forward a
 * month at a time, so a year of cycles runs in seconds; the sandbox's ledger says what was really
 * charged. One stack; the schedules run side by side on the one clock.
 */
let e2e: E2eStack;
let stack: PaymentStack;
/** Where every payments.* topic ended when the suite began: the card-data audit reads from here. */
let auditFrom: Map<string, number>;
let brokers: string[];
/** Seconds the orchestrator's clock was moved forward (re-applied after a restart). */
let advanced = 0;

const DAY = 86_400;

async function advance(seconds: number): Promise<void> {
  await stack.advanceOrchestratorClock(seconds);
  advanced += seconds;
}

/** Events of a payment, each once (delivery is at least once), in arrival order. */
const eventsOf = (paymentId: string): PaymentEvent[] => stack.events.distinctEventsOf(paymentId);

const waitPayment = (paymentId: string, types: readonly string[]) =>
  stack.events.waitForType(paymentId, types, 60_000).then((r) => r.event);

const waitSchedule = (
  scheduleId: string,
  predicate: (e: ScheduleEvent) => boolean,
  timeoutMs = 60_000,
) => stack.events.waitForSchedule(scheduleId, predicate, timeoutMs);

const cycleEvent =
  (type: ScheduleEvent['type'], cycle: number, attempt?: number) => (e: ScheduleEvent) =>
    e.type === type &&
    'cycle' in e &&
    e.cycle === cycle &&
    (attempt === undefined || ('attempt' in e && e.attempt === attempt));

async function charges(clientOrderId: string): Promise<number> {
  const ledger = await stack.controls.ledger(clientOrderId);
  return ledger.entries.filter((e) => e.movement === 'charged').length;
}

const base = (endpointId: string) => ({
  commandId: randomUUID(),
  merchant: { endpointId },
  occurredAt: new Date().toISOString(),
});

/** An approved sale on the endpoint and a card reference taken from it. */
async function cardReference(endpointId: string, currency: string): Promise<string> {
  const sale = stack.sale({ cvv: '123', amountMinor: 1_000, currency, endpointId });
  await stack.send(sale);
  expect((await waitPayment(sale.paymentId, ['approved', 'declined', 'failed'])).type).toBe(
    'approved',
  );
  await stack.sendRaw({ type: 'create-card-ref', ...base(endpointId), paymentId: sale.paymentId });
  const created = await waitPayment(sale.paymentId, ['card-ref-created', 'card-reference-failed']);
  if (created.type !== 'card-ref-created') throw new Error(JSON.stringify(created));
  // What is kept of the card: BIN, last four and brand.
  expect(created.card).toMatchObject({ bin: '444444', lastFour: '4448' });
  return created.cardRef.refId;
}

function rebill(endpointId: string, refId: string, amountMinor: number): RebillCommand {
  return {
    type: 'rebill',
    ...base(endpointId),
    paymentId: randomUUID(),
    cardRef: { refId },
    amount: { minor: amountMinor, currency: 'USD' },
    order: { description: 'Rebill' },
  };
}

beforeAll(async () => {
  const workDir = `${process.cwd()}/.run/schedules-${randomUUID().slice(0, 8)}`;
  mkdirSync(workDir, { recursive: true });
  brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  const probe = kafkaClient(brokers, 'e2e-schedules-audit-start');
  auditFrom = await topicEndOffsets(probe, await listTopics(probe, 'payments.'));
  e2e = await startE2eStack('schedules', {
    // Debug logs: the card-data audit below reads everything the apps could have written.
    logLevel: 'debug',
    workDir,
    env: {
      // Replies are final at once: a cycle takes one round trip, not a processing delay.
      'gateway-sandbox': { SANDBOX_MERCHANTS_FILE: sandboxMerchantsWithDelay(workDir, 0) },
      // An open breaker refuses a request (not sent, retry when it half-opens) for 15 s.
      'gateway-adapter': { GATEWAY_BREAKER_COOLDOWN_MS: '15000' },
      orchestrator: {
        TEST_CONTROLS_ENABLED: 'true',
        TIMER_POLL_MS: '100',
        // A declined cycle is retried after 1 day, then 3 days; then the schedule is suspended.
        SCHEDULE_DUNNING_RETRY_SECONDS: `${DAY},${3 * DAY}`,
      },
    },
  });
  stack = e2e.stack;
});

afterAll(async () => {
  await e2e?.stop();
});

describe('card references and rebill', () => {
  let refId: string;

  beforeAll(async () => {
    refId = await cardReference(SANDBOX_MERCHANT.plainEndpoint, 'USD');
  });

  it('create-card-ref through v4 (RSA-SHA256) where the endpoint is set to it; refused for a declined sale', async () => {
    expect(await cardReference('1116', 'JPY')).toMatch(/^\d+$/);
    const declined = stack.sale({ cvv: '116' });
    await stack.send(declined);
    await waitPayment(declined.paymentId, ['declined']);
    await stack.sendRaw({
      type: 'create-card-ref',
      ...base(SANDBOX_MERCHANT.plainEndpoint),
      paymentId: declined.paymentId,
    });
    const rejected = await waitPayment(declined.paymentId, ['command-rejected']);
    expect(rejected).toMatchObject({ reason: 'INVALID_STATE', commandType: 'create-card-ref' });
  });

  it('get-card-info: BIN, last four and brand of the reference, nothing more', async () => {
    const owner = stack.sale({ cvv: '123' });
    await stack.send(owner);
    await waitPayment(owner.paymentId, ['approved']);
    await stack.sendRaw({
      type: 'create-card-ref',
      ...base(SANDBOX_MERCHANT.plainEndpoint),
      paymentId: owner.paymentId,
    });
    await waitPayment(owner.paymentId, ['card-ref-created']);
    await stack.sendRaw({
      type: 'get-card-info',
      ...base(SANDBOX_MERCHANT.plainEndpoint),
      paymentId: owner.paymentId,
    });
    const info = await waitPayment(owner.paymentId, [
      'card-info-reported',
      'card-reference-failed',
    ]);
    expect(info).toMatchObject({
      type: 'card-info-reported',
      card: { bin: '444444', lastFour: '4448', brand: expect.any(String) as string },
    });
    expect(JSON.stringify(info)).not.toMatch(/JANE|2030|4444444444444448/);
  });

  it('a rebill against the reference is approved and charged once; a declined one charges nothing', async () => {
    const approved = rebill(SANDBOX_MERCHANT.plainEndpoint, refId, 1_234);
    const declined = rebill(SANDBOX_MERCHANT.plainEndpoint, refId, 4_321);
    await stack.controls.addFault({
      clientOrderId: declined.paymentId,
      operation: 'REBILL',
      outcome: 'declined',
    });
    await stack.sendRaw(approved, declined);
    expect(await waitPayment(approved.paymentId, ['approved', 'declined', 'failed'])).toMatchObject(
      {
        type: 'approved',
        amount: { minor: 1_234, currency: 'USD' },
      },
    );
    expect((await waitPayment(declined.paymentId, ['approved', 'declined', 'failed'])).type).toBe(
      'declined',
    );
    expect(eventsOf(approved.paymentId)[0]).toMatchObject({
      type: 'operation-requested',
      operation: 'rebill',
      cardRef: { refId },
    });
    expect(await charges(approved.paymentId)).toBe(1);
    expect(await charges(declined.paymentId)).toBe(0);
  });

  it('a create-card-ref whose reply is lost stays unknown and is asked again: the gateway answers with the same reference', async () => {
    const owner = stack.sale({ cvv: '123' });
    await stack.send(owner);
    await waitPayment(owner.paymentId, ['approved']);
    // The sandbox makes the reference, then drops the connection: the adapter cannot tell.
    await stack.controls.addFault({
      clientOrderId: owner.paymentId,
      operation: 'CARDREF',
      failAfter: 'drop',
      times: 1,
    });
    await stack.sendRaw({
      type: 'create-card-ref',
      ...base(SANDBOX_MERCHANT.plainEndpoint),
      paymentId: owner.paymentId,
    });
    expect(
      await waitPayment(owner.paymentId, [
        'card-reference-unknown',
        'card-ref-created',
        'card-reference-failed',
      ]),
    ).toMatchObject({ type: 'card-reference-unknown', operation: 'create-card-ref', alert: false });
    const created = await waitPayment(owner.paymentId, [
      'card-ref-created',
      'card-reference-failed',
    ]);
    expect(created).toMatchObject({
      type: 'card-ref-created',
      cardRef: { refId: expect.any(String) as string },
    });
    expect(eventsOf(owner.paymentId).filter((e) => e.type === 'card-ref-created')).toHaveLength(1);
  });

  it('a create-card-ref the adapter could not send (its breaker open) is sent again and makes the reference; get-card-info is not blocked', async () => {
    // An endpoint of its own: five sales answered 503 before the sandbox takes them open its breaker.
    const endpointId = '1117';
    const owner = stack.sale({ cvv: '123', currency: 'JPY', endpointId });
    await stack.send(owner);
    await waitPayment(owner.paymentId, ['approved']);
    const tripping = Array.from({ length: 5 }, () =>
      stack.sale({ cvv: '123', currency: 'JPY', endpointId }),
    );
    for (const sale of tripping)
      await stack.controls.addFault({
        clientOrderId: sale.paymentId,
        operation: 'SALE',
        failBefore: 503,
        times: 1,
      });
    await stack.send(...tripping);
    for (const sale of tripping) await waitPayment(sale.paymentId, ['outcome-unknown']);
    await stack.sendRaw({
      type: 'create-card-ref',
      ...base(endpointId),
      paymentId: owner.paymentId,
    });
    await waitPayment(owner.paymentId, ['card-ref-requested']);
    const created = await waitPayment(owner.paymentId, [
      'card-ref-created',
      'card-reference-failed',
    ]);
    expect(created).toMatchObject({
      type: 'card-ref-created',
      cardRef: { refId: expect.any(String) as string },
    });
    await stack.sendRaw({ type: 'get-card-info', ...base(endpointId), paymentId: owner.paymentId });
    expect(
      await waitPayment(owner.paymentId, [
        'card-info-reported',
        'card-reference-failed',
        'command-rejected',
      ]),
    ).toMatchObject({ type: 'card-info-reported' });
  });
});

describe('recurring schedules on the orchestrator’s clock', () => {
  /** Endpoints are the sandbox's fault scopes: each schedule's rebills have their own. */
  const SCHEDULES = {
    steady: '1113',
    recovers: '1111',
    suspended: '1115',
    paused: '1113',
    cancelled: '1113',
    killed: '1114',
    /** Started by create-card-ref on a successful sale (the reference taken from the payment). */
    fromPayment: '1113',
    /** Its endpoint's maximum is lowered after it was created: every rebill of it is refused. */
    refused: '1112',
  } as const;
  type Name = keyof typeof SCHEDULES;
  const ids = Object.fromEntries(
    Object.keys(SCHEDULES).map((name) => [name, randomUUID()]),
  ) as Record<Name, string>;
  let refId: string;

  const requested = (name: Name) =>
    stack.events
      .scheduleEventsOf(ids[name])
      .filter(
        (e): e is Extract<ScheduleEvent, { type: 'cycle-charge-requested' }> =>
          e.type === 'cycle-charge-requested',
      );

  const command = (name: Name, type: string) => ({
    type,
    ...base(SCHEDULES[name]),
    scheduleId: ids[name],
  });

  beforeAll(async () => {
    refId = await cardReference(SANDBOX_MERCHANT.plainEndpoint, 'USD');
    // Tomorrow (UTC) at noon is cycle 0; every schedule is monthly.
    const tomorrow = new Date(Date.now() + DAY * 1000).toISOString().slice(0, 10);
    const create = (name: Name, count?: number): CreateScheduleCommand => ({
      ...command(name, 'create-schedule'),
      type: 'create-schedule',
      cardRef: { refId },
      amount: { minor: 990, currency: 'USD' },
      description: `Plan ${name}`,
      rule: {
        period: 'month',
        interval: 1,
        startDate: tomorrow,
        timeOfDay: '12:00',
        timeZone: 'UTC',
        end: count === undefined ? { kind: 'never' } : { kind: 'count', count },
      },
    });
    await stack.controls.addFault({
      endpoint: '1111',
      operation: 'REBILL',
      outcome: 'declined',
      times: 1,
    });
    await stack.controls.addFault({ endpoint: '1115', operation: 'REBILL', outcome: 'declined' });
    await stack.sendRaw(
      create('steady', 12),
      create('recovers'),
      create('suspended'),
      create('paused'),
      create('cancelled'),
      create('killed', 12),
      create('refused'),
    );
    const sale = stack.sale({ cvv: '123' });
    await stack.send(sale);
    await waitPayment(sale.paymentId, ['approved']);
    const {
      type: _type,
      commandId: _id,
      merchant: _merchant,
      occurredAt: _at,
      cardRef: _ref,
      ...schedule
    } = create('fromPayment', 2);
    await stack.sendRaw({
      type: 'create-card-ref',
      ...base(SCHEDULES.fromPayment),
      paymentId: sale.paymentId,
      schedule,
    });
    for (const name of Object.keys(SCHEDULES) as Name[])
      await waitSchedule(ids[name], (e) => e.type === 'schedule-created');
  });

  it('limits: create and update over the maximum are refused; the maximum lowered after a schedule was created', async () => {
    const overLimit = { minor: 100_000_001, currency: 'USD' };
    await stack.sendRaw({ ...command('steady', 'update-schedule'), amount: overLimit });
    expect(await waitSchedule(ids.steady, (e) => e.type === 'command-rejected')).toMatchObject({
      commandType: 'update-schedule',
      reason: 'AMOUNT_ABOVE_MAXIMUM',
    });
    const tooBig = randomUUID();
    await stack.sendRaw({
      ...command('steady', 'create-schedule'),
      scheduleId: tooBig,
      cardRef: { refId },
      amount: overLimit,
      description: 'Too big',
      rule: {
        period: 'month',
        interval: 1,
        startDate: '2030-01-01',
        timeOfDay: '12:00',
        timeZone: 'UTC',
        end: { kind: 'never' },
      },
    });
    expect(await waitSchedule(tooBig, (e) => e.type === 'command-rejected')).toMatchObject({
      commandType: 'create-schedule',
      reason: 'AMOUNT_ABOVE_MAXIMUM',
    });
    // The operator lowers endpoint 1112's maximum below what 'refused' charges (990).
    await stack.restart('orchestrator', 'SIGTERM', {
      PAYMENT_LIMITS: JSON.stringify({
        default: { maxMinor: 100_000_000 },
        endpoints: { [SCHEDULES.refused]: { maxMinor: 500 } },
      }),
    });
  });

  it('cycle 0: charged; a decline puts the schedule past due with a retry', async () => {
    await advance(2 * DAY);
    for (const name of ['steady', 'paused', 'cancelled', 'killed', 'fromPayment'] as const)
      await waitSchedule(ids[name], cycleEvent('cycle-charged', 0));
    await waitSchedule(ids.recovers, (e) => e.type === 'schedule-past-due');
    const declined = await waitSchedule(ids.suspended, cycleEvent('cycle-charge-declined', 0, 1));
    expect(declined).toMatchObject({ outcome: 'declined', retryAt: expect.any(String) as string });
    // A rebill refused at the command stage is the cycle's outcome: failed, past due, a retry.
    const refused = await waitSchedule(ids.refused, cycleEvent('cycle-charge-declined', 0, 1));
    expect(refused).toMatchObject({
      outcome: 'failed',
      code: 'AMOUNT_ABOVE_MAXIMUM',
      retryAt: expect.any(String) as string,
    });
    await waitSchedule(ids.refused, (e) => e.type === 'schedule-past-due');
  });

  it('pause and cancel are taken', async () => {
    await stack.sendRaw(
      command('paused', 'pause-schedule'),
      command('cancelled', 'cancel-schedule'),
      command('refused', 'pause-schedule'),
    );
    await waitSchedule(ids.paused, (e) => e.type === 'schedule-paused');
    await waitSchedule(ids.refused, (e) => e.type === 'schedule-paused');
    await waitSchedule(ids.cancelled, (e) => e.type === 'schedule-cancelled');
  });

  it('dunning: a retry approved → recovered; every retry declined → suspended', async () => {
    await advance(2 * DAY);
    await waitSchedule(ids.recovers, (e) => e.type === 'schedule-recovered');
    await waitSchedule(ids.suspended, cycleEvent('cycle-charge-declined', 0, 2));
    await advance(4 * DAY);
    await waitSchedule(ids.suspended, (e) => e.type === 'schedule-suspended');
    expect(requested('recovers').map((e) => [e.cycle, e.attempt])).toEqual([
      [0, 1],
      [0, 2],
    ]);
    expect(requested('suspended').map((e) => [e.cycle, e.attempt])).toEqual([
      [0, 1],
      [0, 2],
      [0, 3],
    ]);
  });

  it('a year of monthly cycles in seconds; resume skips the cycles due while paused; the orchestrator SIGKILLed with a charge in flight', async () => {
    for (let cycle = 1; cycle <= 11; cycle++) {
      if (cycle === 3) {
        await stack.sendRaw(command('paused', 'resume-schedule'));
        const resumed = await waitSchedule(ids.paused, (e) => e.type === 'schedule-resumed');
        expect(resumed).toMatchObject({ skippedCycles: 2, nextCycle: 3 });
      }
      if (cycle === 11) {
        // The last cycle's rebill is held by the gateway for 3 s; the orchestrator dies meanwhile.
        await stack.controls.addFault({
          endpoint: '1114',
          operation: 'REBILL',
          latencyMs: 3_000,
          times: 1,
        });
      }
      await advance(31 * DAY);
      if (cycle === 11) {
        await waitSchedule(ids.killed, cycleEvent('cycle-charge-requested', 11));
        await stack.kill('orchestrator');
        await stack.startAgain('orchestrator');
        // The clock control lives in the process: move the new one as far as the old one was.
        const total = advanced;
        advanced = 0;
        await advance(total);
      }
      for (const name of ['steady', 'recovers', 'killed'] as const)
        await waitSchedule(ids[name], cycleEvent('cycle-charged', cycle));
      if (cycle >= 3) await waitSchedule(ids.paused, cycleEvent('cycle-charged', cycle));
      if (cycle === 1) await waitSchedule(ids.fromPayment, cycleEvent('cycle-charged', 1));
    }
    await waitSchedule(ids.fromPayment, (e) => e.type === 'schedule-completed');
    await waitSchedule(ids.steady, (e) => e.type === 'schedule-completed');
    await waitSchedule(ids.killed, (e) => e.type === 'schedule-completed');
  });

  it('the sandbox ledger: exactly one charge per charged cycle, none for declined attempts, none after cancel or suspension', async () => {
    const expected: Record<Name, number[]> = {
      steady: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
      recovers: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
      suspended: [],
      paused: [0, 3, 4, 5, 6, 7, 8, 9, 10, 11],
      cancelled: [0],
      killed: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
      fromPayment: [0, 1],
      refused: [],
    };
    for (const name of Object.keys(SCHEDULES) as Name[]) {
      const charged = stack.events
        .scheduleEventsOf(ids[name])
        .filter((e) => e.type === 'cycle-charged')
        .map((e) => ('cycle' in e ? e.cycle : -1));
      expect({ name, charged }).toEqual({ name, charged: expected[name] });
      const ledger: Array<[number, number, number]> = [];
      for (const r of requested(name)) {
        const approved = eventsOf(r.paymentId).filter((e) => e.type === 'approved').length;
        ledger.push([r.cycle, approved, await charges(r.paymentId)]);
      }
      // Per requested charge: [cycle, approved events, ledger charges] — approved ⇔ charged once.
      for (const [, approved, charged] of ledger) expect(charged).toBe(approved);
      expect(ledger.filter(([, , c]) => c === 1).map(([cycle]) => cycle)).toEqual(expected[name]);
    }
    expect(requested('cancelled').map((e) => e.cycle)).toEqual([0]);
    expect(requested('paused').some((e) => e.cycle === 1 || e.cycle === 2)).toBe(false);
  });
});

describe('card data', () => {
  it('no card number, CVV, holder name, key or signature in any log line, database row or message of this suite', async () => {
    const audit = await auditCardData({
      logDirs: [`${stack.workDir}/logs`],
      databaseUrls: [e2e.orchestratorDb.url, e2e.adapterDb.url],
      kafka: kafkaClient(brokers, 'e2e-schedules-audit'),
      topicOffsets: auditFrom,
      // The control key, and the holder name get-card-info returns (the adapter drops it).
      secrets: [SANDBOX_MERCHANT.controlKey, 'JANE DOE'],
    });
    process.stdout.write(`${formatAudit(audit)}\n`);
    expect(audit.findings).toEqual([]);
    expect(audit).toMatchObject({ logFiles: 4, databases: 2 });
    expect(audit.messages).toBeGreaterThan(100);
  });
});
