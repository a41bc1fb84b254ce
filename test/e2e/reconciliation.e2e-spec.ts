/**
 * Reconciliation on the four processes, the real broker and PostgreSQL. Four sales go
 * through (three approved, one declined); then three mismatches are planted in the sandbox the way
 * a gateway changes an order behind the merchant's back. Two with no callback and no ledger
 * movement: one approved sale now reads declined, the declined one reads approved. One a second
 * charge: another approved order under an approved sale's client order id, charged in the
 * sandbox's ledger, no callback (paid twice). A run over the window must report exactly those
 * three, with the right kinds, and find the fourth matching; the sagas are left as they were. The
 * same is found by a scheduled run (its own short window here), and by the CLI's
 * `payments reconcile --wait`. Then operation by operation: a sale with two returns whose first
 * return the gateway now reads declined (the latest request, the second return, still approved),
 * and transfers, one agreeing, one the gateway now reads declined.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  CE_SOURCES,
  ceType,
  type ReconciliationCompleted,
  ReconciliationEvent,
  type ReconciliationMismatch,
  TOPICS,
  toKafkaHeaders,
} from '@payments/contracts';
import { Client } from 'pg';
import { PaymentStack } from '../../scripts/stack/payment-stack';
import { transfer } from '../../scripts/stack/payout-commands';
import { REPO_ROOT } from '../../scripts/stack/processes';
import { TopicCollector } from '../support/adapter-harness';
import { produceRaw, waitFor } from '../support/kafka';
import { type E2eStack, startE2eStack } from '../support/e2e-stack';

const exec = promisify(execFile);
const brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');

let e2e: E2eStack;
let stack: PaymentStack;
const collector = new TopicCollector(TOPICS.reconciliation);

/** The three sales and the window they were made in. */
let started: Date;
let ended: Date;
let kept: string;
let nowDeclined: string;
let nowApproved: string;
let paidTwice: string;
/** paidTwice's own gateway order, and the second one planted under its client order id. */
let firstOrder: string;
let secondOrder: string;

beforeAll(async () => {
  e2e = await startE2eStack('recon', {
    env: {
      orchestrator: {
        // Scheduled runs of 5-second windows, each checked once it ended 15 s ago: long enough
        // for the test to plant its mismatches first.
        RECONCILIATION_INTERVAL_SECONDS: '5',
        RECONCILIATION_SETTLE_SECONDS: '15',
        RECONCILIATION_TICK_MS: '250',
      },
    },
  });
  stack = e2e.stack;
  await collector.start();

  started = new Date(Date.now() - 1_000);
  const a = stack.sale({ amountMinor: 4_100 });
  const b = stack.sale({ amountMinor: 4_200 });
  const c = stack.sale({ amountMinor: 4_300, cvv: '116' });
  const d = stack.sale({ amountMinor: 4_400 });
  for (const sale of [a, b, c, d]) await stack.send(sale);
  await stack.events.waitForType(a.paymentId, ['approved'], 60_000);
  await stack.events.waitForType(b.paymentId, ['approved'], 60_000);
  await stack.events.waitForType(c.paymentId, ['declined'], 60_000);
  await stack.events.waitForType(d.paymentId, ['approved'], 60_000);
  ended = new Date(Date.now() + 1_000);
  [kept, nowDeclined, nowApproved, paidTwice] = [
    a.paymentId,
    b.paymentId,
    c.paymentId,
    d.paymentId,
  ];

  // The gateway changes its mind about b and c, and tells nobody.
  const [orderB] = await stack.controls.orderIds(nowDeclined);
  const [orderC] = await stack.controls.orderIds(nowApproved);
  if (orderB === undefined || orderC === undefined) throw new Error('sandbox orders not found');
  await stack.controls.overrideStatus(orderB, 'declined');
  await stack.controls.overrideStatus(orderC, 'approved');

  // … and charges d a second time under its client order id, telling nobody either.
  const [orderD] = await stack.controls.orderIds(paidTwice);
  if (orderD === undefined) throw new Error('sandbox order of d not found');
  firstOrder = orderD;
  secondOrder = await stack.controls.chargeAgain(orderD);
  expect(await stack.controls.orderIds(paidTwice)).toEqual([firstOrder, secondOrder]);
}, 240_000);

afterAll(async () => {
  await collector.stop().catch(() => undefined);
  await e2e?.stop();
});

/** The checks of a run in the orchestrator's database (lookups by client order id left out). */
async function checksOf(
  runId: string,
): Promise<Array<{ sagaId: string; operation: string; serial?: string; verdict: string | null }>> {
  const client = new Client({ connectionString: e2e.orchestratorDb.url });
  await client.connect();
  try {
    const { rows } = await client.query<{
      saga_id: string;
      operation: string;
      serial: string | null;
      verdict: string | null;
    }>(
      `SELECT saga_id, expectation->>'operation' AS operation, expectation->>'serial' AS serial,
              verdict
         FROM reconciliation_checks WHERE run_id = $1 AND subject <> 'client-order-id'`,
      [runId],
    );
    return rows.map((r) => ({
      sagaId: r.saga_id,
      operation: r.operation,
      ...(r.serial === null ? {} : { serial: r.serial }),
      verdict: r.verdict,
    }));
  } finally {
    await client.end();
  }
}

/** Each one-operation saga's verdict, by saga id. */
async function verdicts(runId: string): Promise<Record<string, string | null>> {
  return Object.fromEntries((await checksOf(runId)).map((c) => [c.sagaId, c.verdict]));
}

/** Asks for an on-demand run over [from, to), as an operator's tool does; returns its id. */
async function requestRun(from: Date, to: Date): Promise<string> {
  const runId = randomUUID();
  await sendReconcile(runId, from, to, randomUUID());
  return runId;
}

async function sendReconcile(runId: string, from: Date, to: Date, commandId: string) {
  const command = {
    type: 'reconcile',
    commandId,
    runId,
    from: from.toISOString(),
    to: to.toISOString(),
    requestedBy: 'e2e',
    occurredAt: new Date().toISOString(),
  };
  await produceRaw(TOPICS.reconciliationCommands, [
    {
      key: runId,
      value: JSON.stringify(command),
      headers: toKafkaHeaders({
        id: command.commandId,
        type: ceType.command('reconcile'),
        source: CE_SOURCES.admin,
        subject: runId,
        time: command.occurredAt,
      }),
    },
  ]);
}

function events(): ReconciliationEvent[] {
  return collector.messages.flatMap((m) => {
    const parsed = ReconciliationEvent.safeParse(JSON.parse(m.value?.toString('utf8') ?? 'null'));
    return parsed.success ? [parsed.data] : [];
  });
}

const mismatchesOf = (runId: string) =>
  events().filter(
    (e): e is ReconciliationMismatch => e.type === 'reconciliation-mismatch' && e.runId === runId,
  );

async function completionOf(runId: string): Promise<ReconciliationCompleted> {
  let found: ReconciliationCompleted | undefined;
  await waitFor(
    () => {
      found = events().find(
        (e): e is ReconciliationCompleted =>
          e.type === 'reconciliation-completed' && e.runId === runId,
      );
      return found !== undefined;
    },
    `reconciliation run ${runId} completed`,
    90_000,
  );
  if (found === undefined) throw new Error('unreachable');
  return found;
}

/** The mismatches found for our four sales, by payment id. */
function bySaga(mismatches: readonly ReconciliationMismatch[]) {
  const mine = new Set([kept, nowDeclined, nowApproved, paidTwice]);
  return Object.fromEntries(mismatches.filter((m) => mine.has(m.sagaId)).map((m) => [m.sagaId, m]));
}

describe('reconciliation', () => {
  it('on demand: finds exactly the three planted mismatches, counts the fourth matched, changes no saga', async () => {
    const runId = await requestRun(started, ended);
    const completed = await completionOf(runId);
    // The window may hold other sagas than ours, and they may differ too: the e2e stacks share
    // the consumer groups, so commands and requests an earlier suite left unprocessed are taken by
    // this stack. Judged on ours: their verdicts in the database, their events, the counts adding up.
    expect(completed).toMatchObject({ trigger: 'on-demand', requestedBy: 'e2e' });
    expect(completed.byKind['reported-charged-but-not']).toBeGreaterThanOrEqual(1);
    expect(completed.byKind['charged-but-reported-declined']).toBeGreaterThanOrEqual(1);
    expect(completed.byKind['paid-twice']).toBeGreaterThanOrEqual(1);
    expect(completed.checked).toBe(
      completed.matched +
        completed.mismatched +
        (completed.unanswered ?? 0) +
        (completed.handedToSagas ?? 0),
    );
    expect(Object.values(completed.byKind).reduce((sum, n) => sum + (n ?? 0), 0)).toBe(
      completed.mismatched,
    );
    expect(await verdicts(runId)).toMatchObject({
      [kept]: 'match',
      [nowDeclined]: 'reported-charged-but-not',
      [nowApproved]: 'charged-but-reported-declined',
      [paidTwice]: 'paid-twice',
    });
    const found = bySaga(mismatchesOf(runId));
    expect(Object.keys(found).sort()).toEqual([nowApproved, nowDeclined, paidTwice].sort());
    expect(found[nowDeclined]).toMatchObject({
      kind: 'reported-charged-but-not',
      flow: 'card-payment',
      ours: { status: 'approved', operation: 'sale', amount: { minor: 4_200, currency: 'USD' } },
      gateway: { status: 'declined', transactionType: 'sale' },
    });
    expect(found[nowApproved]).toMatchObject({
      kind: 'charged-but-reported-declined',
      ours: { status: 'declined', operation: 'sale' },
      gateway: { status: 'approved', transactionType: 'sale' },
    });
    // Backed by the gateway's status replies about both orders: ours, and the other one.
    expect(found[paidTwice]).toMatchObject({
      kind: 'paid-twice',
      flow: 'card-payment',
      ours: { status: 'approved', operation: 'sale', amount: { minor: 4_400, currency: 'USD' } },
      gateway: {
        status: 'approved',
        transactionType: 'sale',
        amount: { minor: 4_400, currency: 'USD' },
        gatewayOrderId: firstOrder,
      },
      otherOrder: {
        status: 'approved',
        transactionType: 'sale',
        amount: { minor: 4_400, currency: 'USD' },
        gatewayOrderId: secondOrder,
      },
    });
    // The approved sale with one order only was looked up too, and matched.
    expect(found[kept]).toBeUndefined();

    // The same run asked again (a redelivery) starts nothing: still one completion for the run.
    await sendReconcile(runId, started, ended, randomUUID());
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(
      events().filter((e) => e.runId === runId && e.type === 'reconciliation-completed'),
    ).toHaveLength(1);

    // Reconciliation reports; it never rewrites what the sagas said.
    for (const [id, status] of [
      [kept, 'approved'],
      [nowDeclined, 'approved'],
      [nowApproved, 'declined'],
      [paidTwice, 'approved'],
    ] as const) {
      expect((await stack.payment(id)).body).toMatchObject({ status });
    }
  }, 180_000);

  it('scheduled: the windows that hold the sales report the same three mismatches', async () => {
    await waitFor(
      () => {
        const scheduled = new Set(
          events()
            .filter((e) => e.type === 'reconciliation-completed' && e.trigger === 'scheduled')
            .map((e) => e.runId),
        );
        const found = bySaga(
          events().filter(
            (e): e is ReconciliationMismatch =>
              e.type === 'reconciliation-mismatch' && scheduled.has(e.runId),
          ),
        );
        return (
          found[nowDeclined] !== undefined &&
          found[nowApproved] !== undefined &&
          found[paidTwice] !== undefined
        );
      },
      'scheduled runs reporting the three planted mismatches',
      90_000,
    );
    const scheduledMismatches = events().filter(
      (e): e is ReconciliationMismatch =>
        e.type === 'reconciliation-mismatch' &&
        events().some(
          (c) =>
            c.type === 'reconciliation-completed' &&
            c.trigger === 'scheduled' &&
            c.runId === e.runId,
        ),
    );
    const found = bySaga(scheduledMismatches);
    expect(found[kept]).toBeUndefined();
    expect(found[nowDeclined]?.kind).toBe('reported-charged-but-not');
    expect(found[nowApproved]?.kind).toBe('charged-but-reported-declined');
    expect(found[paidTwice]).toMatchObject({
      kind: 'paid-twice',
      otherOrder: { gatewayOrderId: secondOrder },
    });
    // Each saga lies in one window only: reported once by the scheduled runs.
    const mine = scheduledMismatches.filter((m) => m.sagaId === nowDeclined);
    expect(mine).toHaveLength(1);
  }, 120_000);

  it('the CLI: payments reconcile --wait prints the mismatches and exits 3', async () => {
    const cli = exec(
      process.execPath,
      [
        path.join(REPO_ROOT, 'bin/payments.js'),
        'reconcile',
        '--from',
        started.toISOString(),
        '--to',
        ended.toISOString(),
        '--wait',
        '--json',
        '--requested-by',
        'e2e-cli',
      ],
      { env: { ...process.env, KAFKA_BROKERS: brokers.join(',') }, timeout: 120_000 },
    );
    const failure = await cli.then(
      () => undefined,
      (error: unknown) => error as { code: number; stdout: string; stderr: string },
    );
    expect(failure?.code).toBe(3);
    const lines = (failure?.stdout ?? '')
      .split('\n')
      .filter(Boolean)
      .map((l) => ReconciliationEvent.parse(JSON.parse(l)));
    const found = bySaga(
      lines.filter((e): e is ReconciliationMismatch => e.type === 'reconciliation-mismatch'),
    );
    expect(Object.keys(found).sort()).toEqual([nowApproved, nowDeclined, paidTwice].sort());
    expect(found[paidTwice]?.kind).toBe('paid-twice');
    const counts = /(\d+) checked, (\d+) matched, (\d+) mismatched/.exec(failure?.stderr ?? '');
    expect(counts).not.toBeNull();
    expect(Number(counts?.[1]) - Number(counts?.[2])).toBe(Number(counts?.[3]));
    expect(Number(counts?.[3])).toBeGreaterThanOrEqual(3);

    // Bad input: a window that ends before it starts is refused with exit 2, nothing sent.
    const refused = await exec(
      process.execPath,
      [
        path.join(REPO_ROOT, 'bin/payments.js'),
        'reconcile',
        '--from',
        ended.toISOString(),
        '--to',
        started.toISOString(),
      ],
      { env: { ...process.env, KAFKA_BROKERS: brokers.join(',') }, timeout: 60_000 },
    ).then(
      () => undefined,
      (error: unknown) => error as { code: number; stderr: string },
    );
    expect(refused?.code).toBe(2);
    expect(refused?.stderr).toMatch(/--from must be before --to/);
  }, 180_000);

  it('operation by operation: a return the gateway now reads declined is found on that return, not matched by the latest; transfers reconciled', async () => {
    const from = new Date(Date.now() - 1_000);
    // A sale of 100.00, a return of 30.00, and one of 20.00 …
    const sale = stack.sale({ amountMinor: 10_000 });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['approved'], 60_000);
    const returned = (minor: number) =>
      stack.events.waitFor(
        sale.paymentId,
        (e) => e.type === 'returned' && e.amount.minor === minor,
        60_000,
      );
    await stack.send(stack.return(sale.paymentId, 3_000));
    const firstReturn = (await returned(3_000)).event;
    if (firstReturn.type !== 'returned') throw new Error('not a return');
    // … the gateway's status of the first return now says declined, and nobody was told; the
    // second return goes through after it, so the order's latest request is an approved return.
    const [order] = await stack.controls.orderIds(sale.paymentId);
    if (order === undefined) throw new Error('sandbox order of the sale not found');
    await stack.controls.overrideStatus(order, 'declined');
    await stack.send(stack.return(sale.paymentId, 2_000));
    await returned(2_000);
    const firstReturnSerial = stack.events
      .distinctEventsOf(sale.paymentId)
      .flatMap((e) =>
        e.type === 'accepted-by-gateway' &&
        e.requestId === firstReturn.requestId &&
        e.serialNumber !== undefined
          ? [e.serialNumber]
          : [],
      )[0];
    expect(firstReturnSerial).toBeDefined();

    // Two transfers: one the gateway agrees with, one it now reads declined.
    const agreeing = transfer({ amountMinor: 1_500 });
    const disowned = transfer({ amountMinor: 1_600 });
    await stack.sendRaw(agreeing, disowned);
    for (const t of [agreeing, disowned])
      await stack.events.waitForPayout(t.transferId, ['transferred'], 60_000);
    const [disownedOrder] = await stack.controls.orderIds(disowned.transferId);
    if (disownedOrder === undefined) throw new Error('sandbox order of the transfer not found');
    await stack.controls.overrideStatus(disownedOrder, 'declined');
    const to = new Date(Date.now() + 1_000);

    const runId = await requestRun(from, to);
    await completionOf(runId);
    const checks = await checksOf(runId);
    // The sale and each return checked by itself; only the first return differs.
    expect(
      checks
        .filter((c) => c.sagaId === sale.paymentId)
        .map((c) => [c.operation, c.verdict])
        .sort(),
    ).toEqual(
      [
        ['return', 'match'],
        ['return', 'reported-charged-but-not'],
        ['sale', 'match'],
      ].sort(),
    );
    const mismatches = mismatchesOf(runId);
    const onSale = mismatches.filter((m) => m.sagaId === sale.paymentId);
    expect(onSale).toHaveLength(1);
    expect(onSale[0]).toMatchObject({
      kind: 'reported-charged-but-not',
      flow: 'card-payment',
      ours: {
        status: 'partially-returned',
        operation: 'return',
        basis: 'request',
        requestId: firstReturn.requestId,
        serial: firstReturnSerial,
      },
      gateway: { status: 'declined', transactionType: 'reversal' },
    });

    expect(
      checks
        .filter((c) => c.sagaId === agreeing.transferId || c.sagaId === disowned.transferId)
        .map((c) => [c.sagaId, c.operation, c.verdict])
        .sort(),
    ).toEqual(
      [
        [agreeing.transferId, 'transfer', 'match'],
        [disowned.transferId, 'transfer', 'reported-charged-but-not'],
      ].sort(),
    );
    expect(mismatches.filter((m) => m.sagaId === agreeing.transferId)).toEqual([]);
    expect(mismatches.find((m) => m.sagaId === disowned.transferId)).toMatchObject({
      kind: 'reported-charged-but-not',
      flow: 'transfer',
      ours: {
        status: 'transferred',
        operation: 'transfer',
        amount: { minor: 1_600, currency: 'USD' },
        basis: 'request',
      },
      gateway: { status: 'declined', transactionType: 'transfer' },
    });
  }, 240_000);
});
