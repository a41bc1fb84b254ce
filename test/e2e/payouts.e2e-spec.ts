import type { PanEligibilityEvent, PayoutEvent, TransferEvent } from '@payments/contracts';
import { Client } from 'pg';
import { createPaymentGatewayClient } from '@payments/payment-gateway';
import path from 'node:path';
import { auditCardData, formatAudit } from '../../scripts/stack/card-data-audit';
import {
  kafkaClient,
  listTopics,
  type ReceivedPayoutEvent,
  topicEndOffsets,
} from '../../scripts/stack/kafka-io';
import { PaymentStack, SANDBOX_MERCHANT } from '../../scripts/stack/payment-stack';
import {
  approvePayout,
  oneStepPayout,
  payoutCheck,
  payoutForm,
  rejectPayout,
  panEligibility,
  transfer,
  transferByRef,
} from '../../scripts/stack/payout-commands';
import { type E2eStack, startE2eStack } from '../support/e2e-stack';

/**
 * Payouts end to end: the sandbox, gateway-adapter, callback-ingest and the
 * orchestrator as separate processes on the real broker and real PostgreSQL. Commands go in on
 * payments.commands.v1 as a finance system sends them; asserted are the payout events and the
 * sandbox's ledger of money that really left. One stack for the file.
 */

/** Endpoint whose approval window is 3 s (PAYOUT_LIMITS below): the expiry scenario. */
const SHORT_WINDOW_ENDPOINT = '1114';
/** Endpoint whose daily payout budget is 10,000 (PAYOUT_LIMITS below), used by no other test. */
const DAILY_LIMIT_ENDPOINT = '1111';
const DAILY_LIMIT_MINOR = 10_000;

let stack: PaymentStack;
let e2e: E2eStack;
let brokers: string[];
/** Where every payments.* topic ended when the suite began: the card-data audit reads from here. */
let auditFrom: Map<string, number>;

/** A payout's (or transfer's) events, deduplicated by ce_id (delivery is at least once), in arrival order. */
function eventsOf(payoutId: string): Array<PayoutEvent | TransferEvent | PanEligibilityEvent> {
  const seen = new Set<string>();
  const out: Array<PayoutEvent | TransferEvent | PanEligibilityEvent> = [];
  for (const r of stack.events.payoutEventsOf(payoutId)) {
    if (seen.has(r.ceId)) continue;
    seen.add(r.ceId);
    out.push(r.event as PayoutEvent | TransferEvent | PanEligibilityEvent);
  }
  return out;
}

/** Event types, with the operation for those that name one. */
function typesOf(payoutId: string): string[] {
  return eventsOf(payoutId).map((e) =>
    'operation' in e && e.type !== 'payout-failed' ? `${e.type}(${e.operation})` : e.type,
  );
}

function expectOneSequence(payoutId: string): void {
  const versions = eventsOf(payoutId).map((e) => e.version);
  expect(versions).toEqual(versions.map((_, i) => i + 1));
}

function waitFor(payoutId: string, ...types: string[]): Promise<ReceivedPayoutEvent> {
  return stack.events.waitForPayout(payoutId, types, 60_000);
}

/** Stored gateway requests and outbox rows of a saga that still hold a sealed card. */
async function sealedCardsStored(sagaId: string): Promise<number> {
  const client = new Client({ connectionString: e2e.orchestratorDb.url });
  await client.connect();
  try {
    const result = await client.query<{ n: string }>(
      `SELECT (SELECT count(*) FROM gateway_requests WHERE saga_id::text = $1 AND body ?| $2::text[])
            + (SELECT count(*) FROM outbox WHERE aggregate_id::text = $1 AND payload ?| $2::text[])
            AS n`,
      // Named here, not taken from the code under test: the fields that carry sealed cards.
      [sagaId, ['sealedCard', 'sealedDestinationCard']],
    );
    return Number(result.rows[0]?.n ?? -1);
  } finally {
    await client.end();
  }
}

/** What the sandbox really paid out for this client_orderid (the payout id), minor units. */
async function paidOut(payoutId: string): Promise<number[]> {
  const ledger = await stack.controls.ledger(payoutId);
  return ledger.entries.filter((e) => e.movement === 'paid-out').map((e) => e.amountMinor);
}

/** Sends a payout-check and waits until the gateway registered it (awaiting approval). */
async function registered(endpointId?: string, amountMinor?: number): Promise<string> {
  const check = payoutCheck({
    ...(endpointId === undefined ? {} : { endpointId }),
    ...(amountMinor === undefined ? {} : { amountMinor }),
  });
  await stack.sendRaw(check);
  await waitFor(check.payoutId, 'payout-registered');
  return check.payoutId;
}

beforeAll(async () => {
  brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  e2e = await startE2eStack('payouts', {
    logLevel: 'debug',
    env: {
      orchestrator: {
        PAYOUT_LIMITS: JSON.stringify({
          default: { maxMinor: 1_000_000, dailyLimitMinor: 10_000_000, approvalWindowSeconds: 600 },
          endpoints: {
            [SHORT_WINDOW_ENDPOINT]: { approvalWindowSeconds: 3 },
            [DAILY_LIMIT_ENDPOINT]: { dailyLimitMinor: DAILY_LIMIT_MINOR },
          },
        }),
      },
    },
  });
  stack = e2e.stack;
});

beforeAll(async () => {
  const probe = kafkaClient(brokers, 'e2e-payouts-audit-start');
  auditFrom = await topicEndOffsets(probe, await listTopics(probe, 'payments.'));
});

afterAll(() => e2e?.stop());

describe('one-step payout', () => {
  it.each([
    ['v2 payout', 'payout'],
    ['v4 payout', 'payout-v4'],
  ] as const)('%s is approved: paid out once (sandbox ledger)', async (_name, type) => {
    const payout = oneStepPayout({ type, amountMinor: 2_500 });
    await stack.sendRaw(payout);
    const final = await waitFor(payout.payoutId, 'paid-out', 'payout-declined', 'payout-failed');
    expect(final.event).toMatchObject({
      type: 'paid-out',
      amount: { minor: 2_500, currency: 'USD' },
    });
    expect(typesOf(payout.payoutId)).toEqual([
      `payout-requested(${type})`,
      `payout-accepted-by-gateway(${type})`,
      'paid-out',
    ]);
    expectOneSequence(payout.payoutId);
    expect(await paidOut(payout.payoutId)).toEqual([2_500]);
  });

  it('is declined: payout-declined with the gateway code, nothing paid', async () => {
    const payout = oneStepPayout({ amountMinor: 2_600 });
    await stack.controls.addFault({
      clientOrderId: payout.payoutId,
      operation: 'PAYOUT',
      outcome: 'declined',
    });
    await stack.sendRaw(payout);
    const final = await waitFor(payout.payoutId, 'paid-out', 'payout-declined', 'payout-failed');
    expect(final.event).toMatchObject({ type: 'payout-declined', operation: 'payout' });
    expectOneSequence(payout.payoutId);
    expect(await paidOut(payout.payoutId)).toEqual([]);
  });
});

describe('payout form', () => {
  it('is published as payout-action-required with the hosted form URL; nothing paid until the payee acts', async () => {
    const payout = payoutForm({
      amountMinor: 2_700,
      redirectUrl: `${stack.urls['callback-ingest']}/return/${SANDBOX_MERCHANT.plainEndpoint}`,
    });
    await stack.sendRaw(payout);
    const action = await waitFor(payout.payoutId, 'payout-action-required');
    expect(action.event).toMatchObject({
      operation: 'payout-form',
      action: { kind: 'redirect', url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\//) },
    });
    expect(typesOf(payout.payoutId)).toEqual([
      'payout-requested(payout-form)',
      'payout-accepted-by-gateway(payout-form)',
      'payout-action-required(payout-form)',
    ]);
    // The URL is the sandbox's hosted form, live for the payee.
    const url = (action.event as { action: { url: string } }).action.url;
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<form');
    expect(await paidOut(payout.payoutId)).toEqual([]);
  });
});

describe('transfers (v4)', () => {
  it.each([
    ['transfer, source card to destination card', transfer],
    ['transfer-by-ref, to the destination card', transferByRef],
  ] as const)('%s: transferred once (sandbox ledger)', async (_name, build) => {
    const command = build({ amountMinor: 1_900 });
    await stack.sendRaw(command);
    const id = command.transferId;
    const final = await waitFor(id, 'transferred', 'transfer-declined', 'transfer-failed');
    expect(final.event).toMatchObject({
      type: 'transferred',
      operation: command.type,
      amount: { minor: 1_900, currency: 'USD' },
    });
    expect(typesOf(id)).toEqual([
      `transfer-requested(${command.type})`,
      `transfer-accepted-by-gateway(${command.type})`,
      `transferred(${command.type})`,
    ]);
    expectOneSequence(id);
    const ledger = await stack.controls.ledger(id);
    expect(ledger.entries.map((e) => [e.movement, e.amountMinor])).toEqual([
      ['transferred', 1_900],
    ]);
    // Settled: neither sealed card (source, destination) rests in the orchestrator's database.
    expect(await sealedCardsStored(id)).toBe(0);
  });
});

describe('pan-eligibility', () => {
  /**
   * A gateway card reference to check. Setup only: no flow creates card references yet, so the
   * test makes one the way a merchant would, with the signed client against the sandbox
   * (v2 create-card-ref on a sale approved through the stack).
   */
  async function gatewayCardRef(): Promise<string> {
    const sale = stack.sale({ cvv: '123', amountMinor: 100 });
    await stack.send(sale);
    const approved = await stack.events.waitForType(sale.paymentId, ['approved'], 60_000);
    const orderId = (approved.event as { gatewayOrderId?: string }).gatewayOrderId ?? '';
    const client = createPaymentGatewayClient({
      baseUrl: `${stack.urls['gateway-sandbox']}/paynet`,
      endpoint: { endpointId: SANDBOX_MERCHANT.plainEndpoint },
      login: SANDBOX_MERCHANT.login,
      controlKey: SANDBOX_MERCHANT.controlKey,
    });
    const ref = await client.call('v2/create-card-ref', {
      client_orderid: sale.paymentId,
      orderid: orderId,
    });
    await client.close();
    if (ref.outcome !== 'accepted') throw new Error(`create-card-ref: ${ref.outcome}`);
    return ref.reply.cardRefId;
  }

  it('answers eligible for an approved check, not eligible (with the code) for a declined one', async () => {
    const cardRefId = await gatewayCardRef();
    const eligible = panEligibility(cardRefId);
    const notEligible = panEligibility(cardRefId);
    await stack.controls.addFault({
      clientOrderId: notEligible.checkId,
      operation: 'PAN_ELIGIBILITY_SEND',
      outcome: 'declined',
    });
    await stack.sendRaw(eligible, notEligible);
    const yes = await waitFor(
      eligible.checkId,
      'pan-eligibility-answered',
      'pan-eligibility-failed',
    );
    const no = await waitFor(
      notEligible.checkId,
      'pan-eligibility-answered',
      'pan-eligibility-failed',
    );
    expect(yes.event).toMatchObject({ type: 'pan-eligibility-answered', eligible: true });
    expect(no.event).toMatchObject({ type: 'pan-eligibility-answered', eligible: false });
    expect(typesOf(eligible.checkId)).toEqual([
      'pan-eligibility-requested(pan-eligibility)',
      'pan-eligibility-accepted-by-gateway(pan-eligibility)',
      'pan-eligibility-answered(pan-eligibility)',
    ]);
    expectOneSequence(eligible.checkId);
    expect((await stack.controls.ledger(eligible.checkId)).entries).toEqual([]);
  });
});

describe('two-step payout', () => {
  it('payout-check → registered → approve → payout-pay → paid once (sandbox ledger)', async () => {
    const payoutId = await registered(undefined, 5_000);
    expect(await paidOut(payoutId)).toEqual([]); // the check moves nothing
    const registration = eventsOf(payoutId).find((e) => e.type === 'payout-registered');
    expect(registration).toMatchObject({
      amount: { minor: 5_000, currency: 'USD' },
      recipient: { kind: 'card', card: { lastFour: '4448' } },
    });

    await stack.sendRaw(approvePayout(payoutId));
    const paid = await waitFor(payoutId, 'paid-out', 'payout-declined', 'payout-failed');
    expect(paid.event).toMatchObject({
      type: 'paid-out',
      amount: { minor: 5_000, currency: 'USD' },
    });
    expect(typesOf(payoutId)).toEqual([
      'payout-requested(payout-check)',
      'payout-accepted-by-gateway(payout-check)',
      'payout-registered',
      'payout-approved',
      'payout-requested(payout-pay)',
      'payout-accepted-by-gateway(payout-pay)',
      'paid-out',
    ]);
    expectOneSequence(payoutId);
    expect(await paidOut(payoutId)).toEqual([5_000]);
  });

  it('rejected → nothing paid, and a later approval is refused (PAYOUT_REJECTED)', async () => {
    const payoutId = await registered();
    await stack.sendRaw(rejectPayout(payoutId));
    await waitFor(payoutId, 'payout-rejected');
    await stack.sendRaw(approvePayout(payoutId));
    const refused = await waitFor(payoutId, 'payout-command-rejected');
    expect(refused.event).toMatchObject({
      commandType: 'approve-payout',
      reason: 'PAYOUT_REJECTED',
    });
    expect(typesOf(payoutId)).not.toContain('payout-requested(payout-pay)');
    expect(await paidOut(payoutId)).toEqual([]);
  });

  it('the approval window passes → expired, nothing paid, and a later approval is refused (PAYOUT_EXPIRED)', async () => {
    const payoutId = await registered(SHORT_WINDOW_ENDPOINT);
    const expired = await waitFor(payoutId, 'payout-expired');
    expect(expired.event.type).toBe('payout-expired');
    await stack.sendRaw(approvePayout(payoutId, SHORT_WINDOW_ENDPOINT));
    const refused = await waitFor(payoutId, 'payout-command-rejected');
    expect(refused.event).toMatchObject({
      commandType: 'approve-payout',
      reason: 'PAYOUT_EXPIRED',
    });
    expect(typesOf(payoutId)).not.toContain('payout-requested(payout-pay)');
    expect(await paidOut(payoutId)).toEqual([]);
  });

  it('the same approval delivered three times → one payout-pay, paid once', async () => {
    const payoutId = await registered(undefined, 7_000);
    const approval = approvePayout(payoutId);
    // The same command three times in one batch, then once more after it took effect.
    await stack.sendRaw(approval, approval, approval);
    await waitFor(payoutId, 'paid-out', 'payout-declined', 'payout-failed');
    await stack.sendRaw(approval);
    // A different approval after payment is refused, which also proves the redelivery above was
    // consumed before it (one partition per payout).
    await stack.sendRaw(approvePayout(payoutId, SANDBOX_MERCHANT.plainEndpoint, 'someone-else'));
    const refused = await waitFor(payoutId, 'payout-command-rejected');
    expect(refused.event).toMatchObject({ reason: 'PAYOUT_ALREADY_APPROVED' });
    const types = typesOf(payoutId);
    expect(types.filter((t) => t === 'payout-requested(payout-pay)')).toHaveLength(1);
    expect(types.filter((t) => t === 'payout-approved')).toHaveLength(1);
    expect(types.filter((t) => t === 'paid-out')).toHaveLength(1);
    expectOneSequence(payoutId);
    expect(await paidOut(payoutId)).toEqual([7_000]);
  });

  it("payout-pay's reply lost → outcome unknown → resolved by a status query, paid once", async () => {
    const payoutId = await registered(undefined, 3_300);
    // The payout-pay is processed but its reply is lost, and no callback ever arrives: only a
    // status query can resolve it.
    await stack.controls.addFault({
      clientOrderId: payoutId,
      operation: 'PAYOUT_V4_PAY',
      failAfter: 'drop',
      times: 1,
    });
    await stack.controls.addFault({ clientOrderId: payoutId, callbacks: 'drop' });
    await stack.sendRaw(approvePayout(payoutId));
    await waitFor(payoutId, 'payout-outcome-unknown');
    const paid = await waitFor(payoutId, 'paid-out', 'payout-declined', 'payout-failed');
    expect(paid.event.type).toBe('paid-out');
    expect(typesOf(payoutId).slice(3)).toEqual([
      'payout-approved',
      'payout-requested(payout-pay)',
      'payout-outcome-unknown(payout-pay)',
      // The status reply names payout-pay's serial (by-request-sn): kept before the outcome.
      'payout-accepted-by-gateway(payout-pay)',
      'paid-out',
    ]);
    expectOneSequence(payoutId);
    expect(await paidOut(payoutId)).toEqual([3_300]);
  });
});

describe('daily payout limit (one budget per endpoint, currency and UTC day)', () => {
  const FINAL = ['paid-out', 'payout-declined', 'payout-failed', 'payout-refused'];
  const TRANSFER_FINAL = [
    'transferred',
    'transfer-declined',
    'transfer-failed',
    'transfer-refused',
  ];

  it('three one-step payouts of 4,000 under 10,000: two paid out, the third refused (DAILY_PAYOUT_LIMIT_EXCEEDED) and never sent; a transfer draws on the same budget', async () => {
    const payouts = [
      oneStepPayout({ endpointId: DAILY_LIMIT_ENDPOINT, amountMinor: 4_000 }),
      oneStepPayout({ endpointId: DAILY_LIMIT_ENDPOINT, amountMinor: 4_000, type: 'payout-v4' }),
      oneStepPayout({ endpointId: DAILY_LIMIT_ENDPOINT, amountMinor: 4_000 }),
    ];
    // One batch: the three race for the budget as concurrent finance requests would.
    await stack.sendRaw(...payouts);
    const finals = await Promise.all(payouts.map((p) => waitFor(p.payoutId, ...FINAL)));
    // Ids and types only: a failure message never shows the commands' sealed cards.
    const outcomes = payouts.map((p, i) => ({
      payoutId: p.payoutId,
      type: p.type,
      final: finals[i]?.event.type,
    }));
    const paid = outcomes.filter((o) => o.final === 'paid-out');
    const refused = outcomes.filter((o) => o.final === 'payout-refused');
    expect(paid).toHaveLength(2);
    expect(refused).toHaveLength(1);
    const [over] = refused;
    if (over === undefined) throw new Error('no payout refused');
    expect(eventsOf(over.payoutId).at(-1)).toMatchObject({
      type: 'payout-refused',
      reason: 'DAILY_PAYOUT_LIMIT_EXCEEDED',
      reservedToday: { minor: 8_000, currency: 'USD' },
      dailyLimit: { minor: DAILY_LIMIT_MINOR, currency: 'USD' },
    });
    expect(typesOf(over.payoutId)).toEqual([`payout-requested(${over.type})`, 'payout-refused']);
    expectOneSequence(over.payoutId);
    // The sandbox's ledger is the truth about money: 4,000 twice, nothing for the refused one
    // (the gateway never saw its request) and its sealed card is not kept.
    for (const p of paid) expect(await paidOut(p.payoutId)).toEqual([4_000]);
    expect((await stack.controls.ledger(over.payoutId)).entries).toEqual([]);
    expect(await sealedCardsStored(over.payoutId)).toBe(0);

    // The same budget counts transfers: 2,000 fits the day exactly, 1,000 more does not.
    const fits = transfer({ endpointId: DAILY_LIMIT_ENDPOINT, amountMinor: 2_000 });
    await stack.sendRaw(fits);
    const moved = await waitFor(fits.transferId, ...TRANSFER_FINAL);
    expect(moved.event).toMatchObject({ type: 'transferred', amount: { minor: 2_000 } });
    const tooMuch = transferByRef({ endpointId: DAILY_LIMIT_ENDPOINT, amountMinor: 1_000 });
    await stack.sendRaw(tooMuch);
    const stopped = await waitFor(tooMuch.transferId, ...TRANSFER_FINAL);
    expect(stopped.event).toMatchObject({
      type: 'transfer-refused',
      reason: 'DAILY_PAYOUT_LIMIT_EXCEEDED',
      reservedToday: { minor: DAILY_LIMIT_MINOR, currency: 'USD' },
    });
    expect((await stack.controls.ledger(fits.transferId)).entries).toEqual([
      expect.objectContaining({ movement: 'transferred', amountMinor: 2_000 }),
    ]);
    expect((await stack.controls.ledger(tooMuch.transferId)).entries).toEqual([]);
  });
});

describe('card data', () => {
  it('no card number, CVV or control key in any log line, database row or payments.* message of this suite', async () => {
    const audit = await auditCardData({
      logDirs: [path.join(stack.workDir, 'logs')],
      databaseUrls: [e2e.orchestratorDb.url, e2e.adapterDb.url],
      kafka: kafkaClient(brokers, 'e2e-payouts-audit'),
      topicOffsets: auditFrom,
      secrets: [SANDBOX_MERCHANT.controlKey],
    });
    process.stdout.write(`${formatAudit(audit)}\n`);
    expect(audit.findings).toEqual([]);
    // It looked everywhere: every app's log, both databases, every payments.* topic.
    expect(audit).toMatchObject({ logFiles: 4, databases: 2 });
    expect(audit.rows).toBeGreaterThan(100);
    expect(audit.messages).toBeGreaterThan(100);
  });
});
