import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { Admin } from 'kafkajs';
import { PaymentEvent, TOPICS } from '@payments/contracts';
import { auditCardData, formatAudit } from '../../scripts/stack/card-data-audit';
import {
  ReceivedEvent,
  kafkaClient,
  listTopics,
  topicEndOffsets,
} from '../../scripts/stack/kafka-io';
import {
  PaymentStack,
  SANDBOX_MERCHANT,
  SECOND_MERCHANT,
  TEST_CARD_NUMBER,
} from '../../scripts/stack/payment-stack';
import { sleep } from '../../scripts/stack/processes';
import { controlFor } from '../support/callback-control';
import { type E2eStack, startE2eStack } from '../support/e2e-stack';

/**
 * Payments end to end: the gateway sandbox, gateway-adapter, callback-ingest and the
 * orchestrator as separate processes on the real broker and real PostgreSQL databases. Commands go
 * in on payments.commands.v1 exactly as an internal service would send them; what is asserted is
 * the authoritative event stream, the orchestrator's read API and the sandbox's ledger of money
 * that really moved.
 */
const FINAL = ['approved', 'declined', 'failed'] as const;

let stack: PaymentStack;
let e2e: E2eStack;
let admin: Admin;
/** End offsets of the orchestrator's input topics when the suite began (see `settle`). */
let startOffsets: Map<string, number>;
let brokers: string[];
/** Where every payments.* topic ended when the suite began: the card-data audit reads from here. */
let auditFrom: Map<string, number>;
/** Commands this suite sends with a clear card on purpose (refused as PLAIN_CARD_DATA). */
const deliberatePlainCard = new Set<string>();

/** What the e2e reads of GET /payments/:id (apps/orchestrator/README.md "Read API"). */
interface PaymentView {
  readonly status: string;
  readonly version: number;
  readonly amounts: {
    readonly currency: string | null;
    readonly requested: number | null;
    readonly authorized: number;
    readonly captured: number;
    readonly returned: number;
  };
  readonly history: ReadonlyArray<{ readonly type: string; readonly version: number }>;
}

/** Events of a payment, each once (delivery is at least once), in arrival order. */
const eventsOf = (paymentId: string): PaymentEvent[] => stack.events.distinctEventsOf(paymentId);

function typesOf(paymentId: string): string[] {
  return eventsOf(paymentId).map((e) => e.type);
}

/** One event sequence: versions 1..n, in order, each exactly once. */
function expectOneSequence(paymentId: string): void {
  const versions = eventsOf(paymentId).map((e) => e.version);
  expect(versions).toEqual(versions.map((_, i) => i + 1));
}

function waitFinal(paymentId: string, timeoutMs = 90_000): Promise<ReceivedEvent> {
  return stack.events.waitFor(
    paymentId,
    (e) => (FINAL as readonly string[]).includes(e.type),
    timeoutMs,
  );
}

async function charged(clientOrderId: string): Promise<number> {
  const ledger = await stack.controls.ledger(clientOrderId);
  return ledger.entries.filter((e) => e.movement === 'charged').length;
}

beforeAll(async () => {
  brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  e2e = await startE2eStack('payments', {
    logLevel: 'debug',
  });
  stack = e2e.stack;
  admin = kafkaClient(brokers, 'e2e-probe').admin();
  await admin.connect();
  startOffsets = await endOffsets();
  const probe = kafkaClient(brokers, 'e2e-audit-start');
  auditFrom = await topicEndOffsets(probe, await listTopics(probe, 'payments.'));
});

afterAll(async () => {
  await admin?.disconnect();
  await e2e?.stop();
});

describe('sale', () => {
  it('is approved: accepted, then approved with the card summary, charged once', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 2_500 });
    await stack.send(sale);
    const approved = await waitFinal(sale.paymentId);
    expect(approved.event.type).toBe('approved');
    expect(approved.event).toMatchObject({
      paymentId: sale.paymentId,
      amount: { minor: 2_500, currency: 'USD' },
    });
    expectOneSequence(sale.paymentId);
    expect(typesOf(sale.paymentId)).toEqual([
      'operation-requested',
      'accepted-by-gateway',
      'approved',
    ]);
    expect(await charged(sale.paymentId)).toBe(1);
    const view = await settle(sale.paymentId);
    expect(view.status).toBe('approved');
    expect(view.version).toBe(3);
    expect(view.amounts).toEqual({
      currency: 'USD',
      requested: 2_500,
      authorized: 2_500,
      captured: 2_500,
      returned: 0,
    });
    expect(view.history.map((e) => e.type)).toEqual(typesOf(sale.paymentId));
  });

  it('is declined, and nothing is charged', async () => {
    const sale = stack.sale({ cvv: '116', amountMinor: 4_200 });
    await stack.send(sale);
    const final = await waitFinal(sale.paymentId);
    expect(final.event.type).toBe('declined');
    expect(final.event).toMatchObject({
      code: '116',
      message: 'Declined: insufficient funds',
    });
    expectOneSequence(sale.paymentId);
    expect(typesOf(sale.paymentId)).toEqual([
      'operation-requested',
      'accepted-by-gateway',
      'declined',
    ]);
    expect(await charged(sale.paymentId)).toBe(0);
  });

  it('whose reply is lost after processing goes to outcome unknown and is resolved by polling, charged once', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 9_900 });
    await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      operation: 'SALE',
      failAfter: 'drop',
      times: 1,
    });
    // No callback either: only a status query can resolve it.
    await stack.controls.addFault({ clientOrderId: sale.paymentId, callbacks: 'drop' });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['outcome-unknown']);
    const final = await waitFinal(sale.paymentId);
    expect(final.event.type).toBe('approved');
    // The status reply names the request's serial number (by-request-sn): kept before the outcome.
    expect(typesOf(sale.paymentId)).toEqual([
      'operation-requested',
      'outcome-unknown',
      'accepted-by-gateway',
      'approved',
    ]);
    const accepted = eventsOf(sale.paymentId).find((e) => e.type === 'accepted-by-gateway');
    expect(accepted).toMatchObject({ serialNumber: expect.any(String) });
    expectOneSequence(sale.paymentId);
    expect(await charged(sale.paymentId)).toBe(1);
  });

  it('whose callback is dropped is resolved by polling', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 1_100 });
    await stack.controls.addFault({ clientOrderId: sale.paymentId, callbacks: 'drop' });
    await stack.send(sale);
    expect((await waitFinal(sale.paymentId)).event.type).toBe('approved');
    expect(typesOf(sale.paymentId)).toEqual([
      'operation-requested',
      'accepted-by-gateway',
      'approved',
    ]);
    expectOneSequence(sale.paymentId);
  });

  it.each([
    ['duplicated', 'duplicate'],
    ['reordered', 'reorder'],
  ] as const)(
    'with %s callbacks ends in one outcome and one event sequence',
    async (_name, mode) => {
      const sale = stack.sale({ cvv: '123', amountMinor: 1_200 });
      await stack.controls.addFault({ clientOrderId: sale.paymentId, callbacks: mode });
      await stack.send(sale);
      await waitFinal(sale.paymentId);
      // Let the extra callbacks arrive and be processed before counting.
      await waitForCallbacksIdle(sale.paymentId);
      const view = await settle(sale.paymentId);
      expect(view.history.map((e) => e.type)).toEqual([
        'operation-requested',
        'accepted-by-gateway',
        'approved',
      ]);
      expect(typesOf(sale.paymentId)).toEqual(view.history.map((e) => e.type));
      expectOneSequence(sale.paymentId);
      expect(await charged(sale.paymentId)).toBe(1);
    },
  );

  it('ignores a forged callback that arrives while the payment is in flight: 403, no state change', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 1_300 });
    // Keep the payment provably non-final: status queries fail, and the genuine callback is
    // dropped (the sandbox keeps retrying it) until both rules are removed.
    const noStatus = await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      operation: 'STATUS',
      failBefore: 503,
    });
    const noCallback = await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      callbacks: 'drop',
    });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['accepted-by-gateway']);
    const before = await settle(sale.paymentId);
    expect(before.status).toBe('processing');

    const query = new URLSearchParams({
      status: 'declined',
      orderid: '999999',
      merchant_order: sale.paymentId,
      client_orderid: sale.paymentId,
      type: 'sale',
      amount: '13.00',
      currency: 'USD',
      control: controlFor('declined', '999999', sale.paymentId, 'not-the-merchant-key'),
    });
    const response = await fetch(
      `${stack.urls['callback-ingest']}/callbacks/gateway/${SANDBOX_MERCHANT.plainEndpoint}?${query.toString()}`,
    );
    expect(response.status).toBe(403);
    // Everything the forged callback set off (at most a status hint, whose query fails) has
    // been consumed: the payment is exactly as it was, still in flight.
    expect(await settle(sale.paymentId)).toEqual(before);

    await stack.controls.removeFault(noCallback.id);
    await stack.controls.removeFault(noStatus.id);
    expect((await waitFinal(sale.paymentId)).event.type).toBe('approved');
    expect(typesOf(sale.paymentId)).toEqual([
      'operation-requested',
      'accepted-by-gateway',
      'approved',
    ]);
    expectOneSequence(sale.paymentId);
    expect(await charged(sale.paymentId)).toBe(1);
  });

  it('delivered three times is charged once', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 3_300 });
    await stack.send(sale, sale, sale);
    await waitFinal(sale.paymentId);
    const view = await settle(sale.paymentId);
    expect(await charged(sale.paymentId)).toBe(1);
    expect(view.history.map((e) => e.type)).toEqual([
      'operation-requested',
      'accepted-by-gateway',
      'approved',
    ]);
    expect(typesOf(sale.paymentId)).toEqual(view.history.map((e) => e.type));
  });
});

describe('preauth', () => {
  it('partial capture, partial return, then return of the rest', async () => {
    const preauth = stack.preauth({ cvv: '123', amountMinor: 10_000 });
    const id = preauth.paymentId;
    await stack.send(preauth);
    await stack.events.waitForType(id, ['authorized']);
    await stack.send(stack.capture(id, 6_000));
    const captured = await stack.events.waitForType(id, ['captured']);
    expect(captured.event).toMatchObject({
      amount: { minor: 6_000 },
      totalCaptured: { minor: 6_000 },
    });
    await stack.send(stack.return(id, 2_000));
    const partial = await stack.events.waitFor(id, (e) => e.type === 'returned');
    expect(partial.event).toMatchObject({
      amount: { minor: 2_000 },
      remainingBalance: { minor: 4_000 },
    });
    await stack.send(stack.return(id));
    const rest = await stack.events.waitFor(
      id,
      (e) =>
        e.type === 'returned' &&
        (e as { remainingBalance: { minor: number } }).remainingBalance.minor === 0,
    );
    expect(rest.event).toMatchObject({ amount: { minor: 4_000 }, totalReturned: { minor: 6_000 } });
    expectOneSequence(id);
    const totals = (await stack.controls.ledger(id)).totals;
    expect(totals).toMatchObject({ authorized: 10_000, captured: 6_000, refunded: 6_000 });
  });

  it('then void releases the hold', async () => {
    const preauth = stack.preauth({ cvv: '123', amountMinor: 5_000 });
    await stack.send(preauth);
    await stack.events.waitForType(preauth.paymentId, ['authorized']);
    await stack.send(stack.void(preauth.paymentId));
    const voided = await stack.events.waitForType(preauth.paymentId, ['voided']);
    expect(voided.event).toMatchObject({ amount: { minor: 5_000, currency: 'USD' } });
    expectOneSequence(preauth.paymentId);
    expect((await stack.controls.ledger(preauth.paymentId)).totals.captured ?? 0).toBe(0);
  });
});

describe('void of an approved sale', () => {
  it('before settlement cancels the whole charge: voided, and the ledger shows the charge voided once', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 4_500 });
    await stack.send(sale);
    expect((await waitFinal(sale.paymentId)).event.type).toBe('approved');
    await stack.send(stack.void(sale.paymentId));
    const voided = await stack.events.waitForType(sale.paymentId, ['voided', 'declined', 'failed']);
    expect(voided.event).toMatchObject({
      type: 'voided',
      amount: { minor: 4_500, currency: 'USD' },
    });
    expectOneSequence(sale.paymentId);
    const ledger = await stack.controls.ledger(sale.paymentId);
    expect(ledger.entries.map((e) => [e.movement, e.amountMinor])).toEqual([
      ['charged', 4_500],
      ['voided', 4_500],
    ]);
    const view = await settle(sale.paymentId);
    expect(view.status).toBe('voided');
  });
});

describe('two merchants side by side', () => {
  /** Who the sandbox's ledger says moved the money: the merchant whose secrets it verified. */
  async function chargedBy(clientOrderId: string): Promise<string[]> {
    const ledger = await stack.controls.ledger(clientOrderId);
    return ledger.entries.map((e) => `${e.movement} ${e.amountMinor} ${e.login}`);
  }

  it("each endpoint's requests are signed with its own merchant's secrets: both sales charged, each under its own login", async () => {
    const first = stack.sale({ cvv: '123', amountMinor: 1_410 });
    const second = stack.sale({
      cvv: '123',
      amountMinor: 1_420,
      endpointId: SECOND_MERCHANT.endpoint,
    });
    await stack.send(first, second);
    expect((await waitFinal(first.paymentId)).event.type).toBe('approved');
    expect((await waitFinal(second.paymentId)).event.type).toBe('approved');
    expect(await chargedBy(first.paymentId)).toEqual([`charged 1410 ${SANDBOX_MERCHANT.login}`]);
    expect(await chargedBy(second.paymentId)).toEqual([`charged 1420 ${SECOND_MERCHANT.login}`]);
  });

  it('a v4 operation (RSA-SHA256) of the second merchant is signed with its own private key: the card reference is made', async () => {
    const sale = stack.sale({
      cvv: '123',
      amountMinor: 1_430,
      endpointId: SECOND_MERCHANT.endpoint,
    });
    await stack.send(sale);
    expect((await waitFinal(sale.paymentId)).event.type).toBe('approved');
    await stack.sendRaw({
      type: 'create-card-ref',
      commandId: randomUUID(),
      merchant: { endpointId: SECOND_MERCHANT.endpoint },
      occurredAt: new Date().toISOString(),
      paymentId: sale.paymentId,
    });
    const created = await stack.events.waitForType(
      sale.paymentId,
      ['card-ref-created', 'card-reference-failed', 'card-reference-unknown'],
      60_000,
    );
    expect(created.event).toMatchObject({ type: 'card-ref-created' });
  });

  it("a callback carrying the first merchant's valid control for the second merchant's payment in flight is refused (403), nothing changes; the payment settles on its own", async () => {
    const sale = stack.sale({
      cvv: '123',
      amountMinor: 1_440,
      endpointId: SECOND_MERCHANT.endpoint,
    });
    const noStatus = await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      operation: 'STATUS',
      failBefore: 503,
    });
    const noCallback = await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      callbacks: 'drop',
    });
    await stack.send(sale);
    const accepted = await stack.events.waitForType(sale.paymentId, ['accepted-by-gateway']);
    const orderId =
      accepted.event.type === 'accepted-by-gateway' ? (accepted.event.gatewayOrderId ?? '') : '';
    expect(orderId).not.toBe('');
    const before = await settle(sale.paymentId);
    expect(before.status).toBe('processing');

    // Every field true to the order, the checksum made with the other merchant's key.
    const callback = (key: string) =>
      new URLSearchParams({
        status: 'declined',
        orderid: orderId,
        merchant_order: sale.paymentId,
        client_orderid: sale.paymentId,
        type: 'sale',
        amount: '14.40',
        currency: 'USD',
        control: controlFor('declined', orderId, sale.paymentId, key),
      }).toString();
    const url = `${stack.urls['callback-ingest']}/callbacks/gateway/${SECOND_MERCHANT.endpoint}`;
    const forged = await fetch(`${url}?${callback(SANDBOX_MERCHANT.controlKey)}`);
    expect(forged.status).toBe(403);
    expect(await settle(sale.paymentId)).toEqual(before);

    await stack.controls.removeFault(noCallback.id);
    await stack.controls.removeFault(noStatus.id);
    expect((await waitFinal(sale.paymentId)).event.type).toBe('approved');
    expect(typesOf(sale.paymentId)).toEqual([
      'operation-requested',
      'accepted-by-gateway',
      'approved',
    ]);
    expect(await chargedBy(sale.paymentId)).toEqual([`charged 1440 ${SECOND_MERCHANT.login}`]);
  });
});

describe('business rules', () => {
  async function rejection(command: Parameters<PaymentStack['send']>[0]): Promise<string> {
    await stack.send(command);
    const rejected = await stack.events.waitFor(
      command.paymentId,
      (e) => e.type === 'command-rejected' && e.commandId === command.commandId,
    );
    return (rejected.event as { reason: string }).reason;
  }

  it('refuses each rule violation with a command-rejected reason and calls no gateway', async () => {
    const preauth = stack.preauth({ cvv: '123', amountMinor: 5_000 });
    await stack.send(preauth);
    await stack.events.waitForType(preauth.paymentId, ['authorized']);
    const ledgerBefore = await stack.controls.ledger(preauth.paymentId);

    expect(await rejection(stack.capture(preauth.paymentId, 5_001))).toBe(
      'AMOUNT_EXCEEDS_AUTHORIZED',
    );
    expect(
      await rejection({
        ...stack.void(preauth.paymentId),
        amount: { minor: 1_000, currency: 'USD' },
      }),
    ).toBe('PARTIAL_VOID_NOT_SUPPORTED');
    expect(await rejection(stack.capture(preauth.paymentId, 5_000, 'EUR'))).toBe(
      'CURRENCY_MISMATCH',
    );
    expect(await rejection(stack.capture('6f0d9d5e-2d6a-4c55-9a55-0c1d2e3f4a5b', 100))).toBe(
      'PAYMENT_NOT_FOUND',
    );
    expect((await stack.controls.ledger(preauth.paymentId)).entries).toEqual(ledgerBefore.entries);

    const sale = stack.sale({ cvv: '123', amountMinor: 2_000 });
    await stack.send(sale);
    await waitFinal(sale.paymentId);
    expect(await rejection(stack.capture(sale.paymentId, 100))).toBe('NOT_A_PREAUTH');
    expect(await rejection(stack.return(sale.paymentId, 2_001))).toBe('AMOUNT_EXCEEDS_CAPTURED');

    const declined = stack.sale({ cvv: '116', amountMinor: 2_000 });
    await stack.send(declined);
    await waitFinal(declined.paymentId);
    expect(await rejection(stack.return(declined.paymentId))).toBe('INVALID_STATE');
  });

  it('rejects a command carrying plain card data and dead-letters one that is not JSON', async () => {
    const sale = stack.sale({ cvv: '123' });
    const plain = { ...sale, card: { number: TEST_CARD_NUMBER, cvv: '123' } };
    deliberatePlainCard.add(sale.paymentId);
    expect(await rejection(plain as never)).toBe('PLAIN_CARD_DATA');
    await stack.sendRaw('{ not json');
    const next = stack.sale({ cvv: '123' });
    await stack.send(next);
    expect((await waitFinal(next.paymentId)).event.type).toBe('approved');
  });
});

describe('crash safety', () => {
  it('200 sales with the orchestrator killed (SIGKILL) mid-run: each reaches one final outcome, none charged twice', async () => {
    const sales = Array.from({ length: 200 }, (_, i) =>
      stack.sale({ cvv: '123', amountMinor: 100 + i }),
    );
    await stack.send(...sales);
    // Kill once some, but not all, payments are under way.
    await stack.events.waitFor(sales[20].paymentId, (e) => e.type === 'operation-requested');
    await stack.kill('orchestrator', 'SIGKILL');
    await stack.startAgain('orchestrator');
    for (const sale of sales) await waitFinal(sale.paymentId, 180_000);
    for (const sale of sales) {
      const finals = typesOf(sale.paymentId).filter((t) =>
        (FINAL as readonly string[]).includes(t),
      );
      expect(finals).toEqual(['approved']);
      expectOneSequence(sale.paymentId);
    }
    const ledger = await stack.controls.ledger();
    const chargesPerOrder = new Map<string, number>();
    for (const e of ledger.entries.filter((x) => x.movement === 'charged')) {
      chargesPerOrder.set(e.clientOrderId, (chargesPerOrder.get(e.clientOrderId) ?? 0) + 1);
    }
    for (const sale of sales) expect(chargesPerOrder.get(sale.paymentId)).toBe(1);
  });

  it('an authorization not captured before its hold expires is voided', async () => {
    await stack.restart('orchestrator', 'SIGTERM', {
      HOLD_EXPIRY_SECONDS: '3',
      HOLD_EXPIRY_ACTION: 'void',
    });
    const preauth = stack.preauth({ cvv: '123', amountMinor: 7_000 });
    await stack.send(preauth);
    await stack.events.waitForType(preauth.paymentId, ['authorized']);
    const expired = await stack.events.waitForType(preauth.paymentId, ['hold-expired']);
    expect(expired.event).toMatchObject({ action: 'void', amount: { minor: 7_000 } });
    await stack.events.waitForType(preauth.paymentId, ['voided']);
    expectOneSequence(preauth.paymentId);
  });
});

describe('business metrics', () => {
  /** A counter's value for these labels on the orchestrator's /metrics (0 when absent). */
  function counter(text: string, name: string, labels: Record<string, string>): number {
    const line = text
      .split('\n')
      .find(
        (l) =>
          l.startsWith(`${name}{`) &&
          Object.entries(labels).every(([k, v]) => l.includes(`${k}="${v}"`)),
      );
    return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
  }

  it('/metrics counts the outcomes and the money this suite moved, as its events say', async () => {
    // The suite's own events (delivery is at least once: distinct ce_ids), against the counters
    // of the orchestrator that wrote them (one orchestrator, restarted only before this suite's
    // crash test: its counters began with that process, so compare what happened since).
    const metrics = async () => (await fetch(`${stack.urls.orchestrator}/metrics`)).text();
    const before = await metrics();
    const sale = stack.sale({ cvv: '123', amountMinor: 1_700 });
    await stack.send(sale);
    expect((await waitFinal(sale.paymentId)).event.type).toBe('approved');
    const declined = stack.sale({ cvv: '116', amountMinor: 1_800 });
    await stack.send(declined);
    expect((await waitFinal(declined.paymentId)).event.type).toBe('declined');
    const after = await metrics();
    const delta = (name: string, labels: Record<string, string>) =>
      counter(after, name, labels) - counter(before, name, labels);
    const labels = { flow: 'card-payment', type: 'approved' };
    expect(delta('orchestrator_saga_events_total', labels)).toBe(1);
    expect(
      delta('orchestrator_saga_events_total', { flow: 'card-payment', type: 'declined' }),
    ).toBe(1);
    expect(
      delta('orchestrator_money_moved_minor_units_total', { ...labels, currency: 'USD' }),
    ).toBe(1_700);
    // Time to truth: the sales' gateway answers timed to their events (any source).
    expect(after).toMatch(
      /^orchestrator_time_to_truth_seconds_count\{(?=[^}]*flow="card-payment")(?=[^}]*operation="sale")[^}]*\} [1-9]/m,
    );
  });
});

describe('card data', () => {
  it('appears in no log line, no database row and no message of this suite (the card-data audit)', async () => {
    const audit = await auditCardData({
      logDirs: [path.join(stack.workDir, 'logs')],
      databaseUrls: [e2e.orchestratorDb.url, e2e.adapterDb.url],
      kafka: kafkaClient(brokers, 'e2e-audit'),
      topicOffsets: auditFrom,
      deliberateCommandKeys: deliberatePlainCard,
      secrets: [SANDBOX_MERCHANT.controlKey, SECOND_MERCHANT.controlKey],
    });
    process.stdout.write(`${formatAudit(audit)}\n`);
    expect(audit.findings).toEqual([]);
    // It looked everywhere: every app's log, both databases, every payments.* topic.
    expect(audit).toMatchObject({ logFiles: 4, databases: 2, skipped: 1 });
    expect(audit.logLines).toBeGreaterThan(100);
    expect(audit.rows).toBeGreaterThan(100);
    expect(audit.messages).toBeGreaterThan(100);
  });
});

/**
 * Waits until the sandbox has no callback of this payment scheduled, held or in flight (other
 * payments' dropped callbacks are retried for the whole schedule and keep the sandbox busy).
 */
async function waitForCallbacksIdle(paymentId: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if ((await stack.controls.callbacks(paymentId)).idle) return;
    await sleep(200);
  }
  throw new Error('sandbox callbacks did not go idle');
}

/** The topics the orchestrator consumes (group `orchestrator`, one commit per handled message). */
const ORCHESTRATOR_INPUTS = [TOPICS.commands, TOPICS.gatewayResults, TOPICS.gatewayCallbacks];

/**
 * Waits until the orchestrator has handled everything published to its input topics so far (its
 * consumer group's committed offsets have reached the end offsets taken now), then reads the
 * payment through the read API. Writes nothing: no probe command, no event in the stream.
 */
async function settle(paymentId: string, timeoutMs = 30_000): Promise<PaymentView> {
  const ends = await endOffsets();
  // A partition that got nothing since the suite began may have no commit of this group at all
  // (a broker reused across runs): nothing to wait for there.
  for (const [key, end] of ends) if (end === startOffsets.get(key)) ends.delete(key);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const committed = await admin.fetchOffsets({
      groupId: 'orchestrator',
      topics: [...ORCHESTRATOR_INPUTS],
    });
    const behind = committed.flatMap(({ topic, partitions }) =>
      partitions.filter((p) => {
        const end = ends.get(`${topic}/${p.partition}`);
        return end !== undefined && Number(p.offset) < end;
      }),
    );
    if (behind.length === 0) break;
    if (Date.now() > deadline) {
      throw new Error(`orchestrator still behind on ${JSON.stringify(behind)}`);
    }
    await sleep(100);
  }
  const view = await stack.payment(paymentId);
  expect(view.status).toBe(200);
  return view.body as PaymentView;
}

async function endOffsets(): Promise<Map<string, number>> {
  // A broker busy electing leaders answers "not the leader" for a moment: ask again.
  for (let attempt = 1; ; attempt++) {
    try {
      const ends = new Map<string, number>();
      for (const topic of ORCHESTRATOR_INPUTS) {
        for (const p of await admin.fetchTopicOffsets(topic)) {
          ends.set(`${topic}/${p.partition}`, Number(p.high));
        }
      }
      return ends;
    } catch (error) {
      if (attempt >= 20 || (error as { retriable?: boolean }).retriable !== true) throw error;
      await sleep(250);
    }
  }
}
