/**
 * Reconciliation tells the truth, and settles by evidence (issues #32 items 3, 4, 7 and #33
 * item 1), on the four processes, the real broker and PostgreSQL, and the sandbox over HTTP:
 *
 *  - the gateway refuses every status query with 403 during a run: approved and declined sales
 *    alike are `unanswered` (inconclusive), never a false `no-trace-at-gateway` or `match`;
 *  - a universal payment form that the endpoint (1118) turns into a hold is checked as the preauth
 *    it became: a match, no false `operation-differs`;
 *  - amounts that differ (the gateway's status replies about an approved sale name another
 *    amount while the payment is live): a run opens a case (`reconciliation-mismatch`) holding
 *    the finding, listed by `/admin/cases`; a second run adds its finding to that same case;
 *    two people decide it for finance (the saga's history stands); every step is a row of
 *    `admin_audit` and a `case-step-audited` event (issue #33);
 *  - a sale whose reply and callbacks are lost stays unknown, nothing of its own asks the gateway
 *    (the stack's timer worker is held back: TIMER_POLL_MS an hour, so no poll can settle it);
 *    an on-demand run finds the gateway's answer about it and hands it to the saga, which settles
 *    `approved` with its usual events — no person involved, charged once;
 *  - a registered schedule's charge the gateway made while its callbacks were all lost, the
 *    schedule's own search not running: a run asks for the cycle by its client order id and the
 *    schedule records the charge it finds (last: it moves the orchestrator's clock).
 *
 * Judged on our own sagas (the e2e stacks share consumer groups).
 */
import { randomUUID } from 'node:crypto';
import {
  AdminAuditEvent,
  type CaseStepAudited,
  CE_SOURCES,
  ceType,
  type ReconciliationCompleted,
  ReconciliationEvent,
  type ReconciliationMismatch,
  TOPICS,
  toKafkaHeaders,
} from '@payments/contracts';
import { Client } from 'pg';
import { PaymentStack, SANDBOX_MERCHANT } from '../../scripts/stack/payment-stack';
import { TopicCollector } from '../support/adapter-harness';
import { produceRaw, waitFor } from '../support/kafka';
import { adminTokens, type E2eStack, startE2eStack } from '../support/e2e-stack';

const DAY = 86_400;
/** Registered with the gateway (its schedules are charged by the sandbox). */
const SCHEDULE_ENDPOINT = '1113';

let e2e: E2eStack;
let stack: PaymentStack;
const collector = new TopicCollector(TOPICS.reconciliation);
const audit = new TopicCollector(TOPICS.adminAudit);
const ALICE = `alice-${randomUUID()}`;
const BOB = `bob-${randomUUID()}`;

/** The sale whose reply and callbacks are lost, and when it was sent. */
let lost: string;
let lostFrom: Date;

beforeAll(async () => {
  e2e = await startE2eStack('recon_truth', {
    env: {
      // The refused status queries would open the endpoint's breaker (its own suite's subject).
      'gateway-adapter': { GATEWAY_BREAKER_FAILURES: '1000' },
      orchestrator: {
        // No timer fires while the suite runs: no poll, no search of a saga's own settles
        // anything; what is settled here, a run settled.
        TIMER_POLL_MS: '3600000',
        // An outcome unknown for a second is a run's business (an hour by default).
        UNKNOWN_ALERT_SECONDS: '1',
        RECONCILIATION_TICK_MS: '250',
        // A refusal is asked again once (2 s later), then reported unanswered.
        RECONCILIATION_MAX_ATTEMPTS: '2',
        SCHEDULE_GATEWAY_REGISTRATION_ENDPOINTS: SCHEDULE_ENDPOINT,
        // The last test moves the orchestrator's clock (its test control).
        TEST_CONTROLS_ENABLED: 'true',
        ADMIN_TOKENS: adminTokens([
          { name: 'alice', role: 'operator', scope: 'all', token: ALICE },
          { name: 'bob', role: 'approver', scope: 'all', token: BOB },
        ]),
      },
    },
  });
  stack = e2e.stack;
  await collector.start();
  await audit.start();

  // The gateway charges the sale, its reply lost on the way back and its callbacks all dropped.
  lostFrom = new Date(Date.now() - 1_000);
  const sale = stack.sale({ cvv: '123', amountMinor: 5_300 });
  lost = sale.paymentId;
  await stack.controls.addFault({ clientOrderId: lost, operation: 'SALE', failAfter: 'drop' });
  await stack.controls.addFault({ clientOrderId: lost, callbacks: 'drop' });
  await stack.send(sale);
  await stack.events.waitForType(lost, ['outcome-unknown'], 60_000);
}, 240_000);

afterAll(async () => {
  await collector.stop().catch(() => undefined);
  await audit.stop().catch(() => undefined);
  await e2e?.stop();
});

/** Asks for an on-demand run over [from, to), as an operator's tool does; returns its id. */
async function requestRun(from: Date, to: Date): Promise<string> {
  const runId = randomUUID();
  const command = {
    type: 'reconcile',
    commandId: randomUUID(),
    runId,
    from: from.toISOString(),
    to: to.toISOString(),
    requestedBy: 'e2e-truth',
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
  return runId;
}

function events(): ReconciliationEvent[] {
  return collector.messages.flatMap((m) => {
    const parsed = ReconciliationEvent.safeParse(JSON.parse(m.value?.toString('utf8') ?? 'null'));
    return parsed.success ? [parsed.data] : [];
  });
}

const mismatchesOf = (runId: string, sagaIds: readonly string[]) =>
  events().filter(
    (e): e is ReconciliationMismatch =>
      e.type === 'reconciliation-mismatch' && e.runId === runId && sagaIds.includes(e.sagaId),
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
    120_000,
  );
  if (found === undefined) throw new Error('unreachable');
  return found;
}

/** The verdicts of a run's checks of these sagas (lookups by client order id left out). */
async function verdictsOf(
  runId: string,
  sagaIds: readonly string[],
): Promise<Array<{ sagaId: string; subject: string; operation: string; verdict: string | null }>> {
  const client = new Client({ connectionString: e2e.orchestratorDb.url });
  await client.connect();
  try {
    const { rows } = await client.query<{
      saga_id: string;
      subject: string;
      operation: string;
      verdict: string | null;
    }>(
      `SELECT saga_id, subject, expectation->>'operation' AS operation, verdict
         FROM reconciliation_checks
        WHERE run_id = $1 AND subject <> 'client-order-id' AND saga_id = ANY($2::uuid[])
        ORDER BY saga_id, subject`,
      [runId, sagaIds],
    );
    return rows.map((r) => ({
      sagaId: r.saga_id,
      subject: r.subject,
      operation: r.operation,
      verdict: r.verdict,
    }));
  } finally {
    await client.end();
  }
}

const admin = (method: 'GET' | 'POST', route: string, token: string, body?: unknown) =>
  stack.admin<unknown>(method, route, token, body);

interface ListedCase {
  caseId: string;
  sagaId: string;
  concern: string;
  status: string;
  operation: string;
  requestedAmount?: { minor: number; currency: string };
  reportedAmount?: { minor: number; currency: string };
  evidence: Array<{ source: string; summary: string }>;
}

/** The cases `/admin/cases` lists for a saga. */
async function casesOf(sagaId: string): Promise<ListedCase[]> {
  const { status, body } = await admin('GET', '/admin/cases', ALICE);
  if (status !== 200 || !Array.isArray(body))
    throw new Error(`GET /admin/cases: ${status} ${JSON.stringify(body)}`);
  return (body as ListedCase[]).filter((c) => c.sagaId === sagaId);
}

/** The case-step-audited events of a case on the admin audit topic, in order. */
function stepsOnTopic(caseId: string): CaseStepAudited[] {
  return audit.messages.flatMap((m) => {
    const parsed = AdminAuditEvent.safeParse(JSON.parse(m.value?.toString('utf8') ?? 'null'));
    return parsed.success &&
      parsed.data.type === 'case-step-audited' &&
      parsed.data.caseId === caseId
      ? [parsed.data]
      : [];
  });
}

/** The admin_audit rows of a case: [action, actor, role, whether a command was sent]. */
async function auditRowsOf(caseId: string): Promise<Array<[string, string, string, boolean]>> {
  const client = new Client({ connectionString: e2e.orchestratorDb.url });
  await client.connect();
  try {
    const { rows } = await client.query<{
      action: string;
      actor: string;
      role: string;
      command_id: string | null;
    }>(
      `SELECT action, actor, role, command_id FROM admin_audit WHERE case_id = $1 ORDER BY (detail->>'index')::int`,
      [caseId],
    );
    return rows.map((r) => [r.action, r.actor, r.role, r.command_id !== null]);
  } finally {
    await client.end();
  }
}

/** The counts add up: every check is a match, a mismatch, unanswered or handed to its saga. */
function addsUp(completed: ReconciliationCompleted): void {
  expect(completed.checked).toBe(
    completed.matched +
      completed.mismatched +
      (completed.unanswered ?? 0) +
      (completed.handedToSagas ?? 0),
  );
  expect(Object.values(completed.byKind).reduce((sum, n) => sum + (n ?? 0), 0)).toBe(
    completed.mismatched,
  );
}

describe('reconciliation tells the truth', () => {
  it('STATUS refused 403 during a run: approved and declined sales are unanswered, no false mismatch', async () => {
    // From now on: the lost sale (unknown since beforeAll) is left to the evidence test.
    const from = new Date();
    const approved = [stack.sale({ amountMinor: 4_100 }), stack.sale({ amountMinor: 4_200 })];
    const declined = stack.sale({ amountMinor: 4_300, cvv: '116' });
    await stack.send(...approved, declined);
    for (const sale of approved) await stack.events.waitForType(sale.paymentId, ['approved']);
    await stack.events.waitForType(declined.paymentId, ['declined']);
    const to = new Date(Date.now() + 1_000);
    const ours = [...approved, declined].map((s) => s.paymentId);
    // Every status query about them is refused as an authentication failure while the run asks.
    const refusals = await Promise.all(
      ours.map((clientOrderId) =>
        stack.controls.addFault({ clientOrderId, operation: 'STATUS', failBefore: 403 }),
      ),
    );
    try {
      const runId = await requestRun(from, to);
      const completed = await completionOf(runId);
      addsUp(completed);
      expect(completed.unanswered).toBeGreaterThanOrEqual(3);
      const checks = await verdictsOf(runId, ours);
      expect(new Set(checks.map((c) => c.sagaId))).toEqual(new Set(ours));
      expect(checks.map((c) => c.verdict)).toEqual(checks.map(() => 'unanswered'));
      expect(mismatchesOf(runId, ours)).toEqual([]);
    } finally {
      for (const fault of refusals) await stack.controls.removeFault(fault.id);
    }
  }, 180_000);

  it('a universal payment form that became a hold is checked as the preauth it is: a match', async () => {
    // From now on: the lost sale (unknown since beforeAll) is left to the evidence test.
    const from = new Date();
    const form = stack.hostedForm('payment-form', {
      endpointId: SANDBOX_MERCHANT.paymentFormPreauthEndpoint,
      amountMinor: 1_250,
    });
    await stack.send(form);
    const action = (
      await stack.events.waitFor(
        form.paymentId,
        (e) => e.type === 'action-required' && e.action.kind === 'redirect',
        60_000,
      )
    ).event;
    if (action.type !== 'action-required' || action.action.kind !== 'redirect')
      throw new Error(`expected a redirect action, got ${JSON.stringify(action)}`);
    // The payer fills in the gateway's page (a scripted client: the form's fields and a card).
    const page = await fetch(action.action.url);
    expect(page.status).toBe(200);
    const hidden = Object.fromEntries(
      [...(await page.text()).matchAll(/<input[^>]*type="hidden"[^>]*>/g)].flatMap(([tag]) => {
        const name = /name="([^"]+)"/.exec(tag)?.[1];
        const value = /value="([^"]*)"/.exec(tag)?.[1] ?? '';
        return name === undefined ? [] : [[name, value]];
      }),
    );
    const submitted = await fetch(action.action.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        ...hidden,
        credit_card_number: '4444444444444448',
        card_printed_name: 'FORM PAYER',
        expire_month: '12',
        expire_year: '2099',
        cvv2: '123',
      }).toString(),
      redirect: 'manual',
    });
    expect(submitted.status).toBeLessThan(500);
    await stack.events.waitForType(form.paymentId, ['authorized'], 90_000);
    const to = new Date(Date.now() + 1_000);

    const runId = await requestRun(from, to);
    addsUp(await completionOf(runId));
    // Recorded as the sale it was asked as; checked as the preauth the gateway made of it.
    expect(await verdictsOf(runId, [form.paymentId])).toEqual([
      expect.objectContaining({ operation: 'preauth', verdict: 'match' }),
    ]);
    expect(mismatchesOf(runId, [form.paymentId])).toEqual([]);
  }, 180_000);

  it('a sale whose reply and callbacks were lost is settled by a run, by the evidence, charged once', async () => {
    expect(stack.events.distinctEventsOf(lost).map((e) => e.type)).toEqual([
      'operation-requested',
      'outcome-unknown',
    ]);
    const runId = await requestRun(lostFrom, new Date(Date.now() + 1_000));
    // The saga settles through its own rules, with its usual events.
    const settled = await stack.events.waitForType(
      lost,
      ['approved', 'declined', 'failed'],
      90_000,
    );
    expect(settled.event).toMatchObject({
      type: 'approved',
      amount: { minor: 5_300, currency: 'USD' },
    });
    const completed = await completionOf(runId);
    addsUp(completed);
    expect(completed.handedToSagas).toBeGreaterThanOrEqual(1);
    expect(await verdictsOf(runId, [lost])).toEqual([
      expect.objectContaining({ subject: 'order', verdict: 'handed-to-saga' }),
    ]);
    expect(mismatchesOf(runId, [lost])).toEqual([]);
    const ledger = await stack.controls.ledger(lost);
    expect(ledger.entries.map((e) => [e.movement, e.amountMinor])).toEqual([['charged', 5_300]]);
  }, 180_000);

  it('amounts that differ: a run opens one case holding the finding, listed and audited; a second run adds its finding; two people decide it for finance, the saga untouched', async () => {
    const from = new Date();
    const sale = stack.sale({ cvv: '123', amountMinor: 4_400 });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['approved']);
    const to = new Date(Date.now() + 1_000);
    const sagaEvents = stack.events.distinctEventsOf(sale.paymentId).map((e) => e.type);
    // While the payment is live, the gateway's status replies about it name 40.00, not 44.00.
    const fault = await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      operation: 'STATUS',
      replyAmount: '40.00',
    });
    let listed: ListedCase[];
    try {
      const first = await requestRun(from, to);
      addsUp(await completionOf(first));
      expect(mismatchesOf(first, [sale.paymentId])).toEqual([
        expect.objectContaining({
          kind: 'amount-differs',
          gateway: expect.objectContaining({ amount: { minor: 4_000, currency: 'USD' } }),
        }),
      ]);
      listed = await casesOf(sale.paymentId);
      expect(listed).toEqual([
        expect.objectContaining({
          concern: 'reconciliation-mismatch',
          status: 'open',
          operation: 'sale',
          requestedAmount: { minor: 4_400, currency: 'USD' },
          reportedAmount: { minor: 4_000, currency: 'USD' },
        }),
      ]);
      expect(listed[0]?.evidence).toEqual([
        expect.objectContaining({
          source: 'reconciliation',
          summary: expect.stringContaining('amount-differs'),
        }),
      ]);
      // Run again: the same case (one per saga operation), the second finding added to it.
      const second = await requestRun(from, to);
      addsUp(await completionOf(second));
      listed = await casesOf(sale.paymentId);
      expect(listed).toHaveLength(1);
      expect(listed[0]?.evidence.map((e) => e.source)).toEqual([
        'reconciliation',
        'reconciliation',
      ]);
    } finally {
      await stack.controls.removeFault(fault.id);
    }
    const caseId = String(listed[0]?.caseId);
    // Two people decide: the gateway took 40.00 after all (its statement), for finance.
    const proposed = await admin('POST', `/admin/cases/${caseId}/propose`, ALICE, {
      decision: 'done',
      amount: { minor: 4_000, currency: 'USD' },
      amountWhy: 'the gateway reports 40.00 for the order; we reported 44.00',
      reason: 'the acquirer statement shows 40.00',
    });
    expect(proposed.status).toBe(200);
    const approved = await admin('POST', `/admin/cases/${caseId}/approve`, BOB);
    expect(approved).toMatchObject({ status: 200, body: { status: 'closed' } });
    // The saga's history stands: no event of the decision in it.
    expect(stack.events.distinctEventsOf(sale.paymentId).map((e) => e.type)).toEqual(sagaEvents);

    const expected: Array<[string, string, string, boolean]> = [
      ['case-opened', 'system', 'system', false],
      ['case-evidence-added', 'system', 'system', false],
      ['case-proposed', 'alice', 'operator', false],
      ['case-approved', 'bob', 'approver', false],
    ];
    expect(await auditRowsOf(caseId)).toEqual(expected);
    await waitFor(() => stepsOnTopic(caseId).length >= 4, 'the case steps on the audit topic');
    expect(stepsOnTopic(caseId).map((e) => [e.step, e.actor, e.role])).toEqual(
      expected.map(([action, actor, role]) => [action.replace(/^case-/, ''), actor, role]),
    );
    expect(stepsOnTopic(caseId)[3]).toMatchObject({
      decision: 'done',
      amount: { minor: 4_000, currency: 'USD' },
      reason: 'the acquirer statement shows 40.00',
      evidenceSeen: 2,
    });
  }, 240_000);

  // Last: it moves the orchestrator's clock.
  it("a registered schedule's charge made with every callback lost is found by a run and recorded once", async () => {
    const base = () => ({
      commandId: randomUUID(),
      merchant: { endpointId: SCHEDULE_ENDPOINT },
      occurredAt: new Date().toISOString(),
    });
    // A card reference to charge.
    const first = stack.sale({ cvv: '123', amountMinor: 1_000, endpointId: SCHEDULE_ENDPOINT });
    await stack.send(first);
    await stack.events.waitForType(first.paymentId, ['approved']);
    await stack.sendRaw({ type: 'create-card-ref', ...base(), paymentId: first.paymentId });
    const created = await stack.events.waitForType(first.paymentId, [
      'card-ref-created',
      'card-reference-failed',
    ]);
    if (created.event.type !== 'card-ref-created') throw new Error(JSON.stringify(created.event));

    const scheduleId = randomUUID();
    const charge = `${scheduleId}-1`;
    await stack.controls.addFault({ clientOrderId: charge, callbacks: 'drop' });
    const start = new Date(Date.now() + 3 * DAY * 1000).toISOString().slice(0, 10);
    await stack.sendRaw({
      type: 'create-schedule',
      ...base(),
      scheduleId,
      cardRef: { refId: created.event.cardRef.refId },
      amount: { minor: 2_700, currency: 'USD' },
      description: 'One charge, callbacks lost',
      rule: {
        period: 'month',
        interval: 1,
        startDate: start,
        timeOfDay: '00:00',
        timeZone: 'UTC',
        end: { kind: 'count', count: 1 },
      },
    });
    await stack.events.waitForSchedule(scheduleId, (e) => e.type === 'schedule-registered', 60_000);
    // The gateway charges it on its own time; nobody hears of it.
    await stack.controls.advanceClock(4 * DAY);
    await waitFor(
      async () => (await stack.controls.ledger(charge)).entries.length > 0,
      'the sandbox charging the cycle',
    );
    expect(stack.events.scheduleEventsOf(scheduleId).map((e) => e.type)).toEqual([
      'schedule-created',
      'schedule-registered',
    ]);
    // Past the cycle's time, the grace and the alert age on the orchestrator's clock: a run over
    // the days that hold the cycle asks the gateway for it by its client order id.
    await stack.advanceOrchestratorClock(5 * DAY);
    const now = Date.now() + 5 * DAY * 1000;
    const runId = await requestRun(new Date(now - 10 * DAY * 1000), new Date(now));
    await stack.events.waitForSchedule(
      scheduleId,
      (e) => e.type === 'gateway-cycle-charged',
      90_000,
    );
    const completed = await completionOf(runId);
    addsUp(completed);
    expect(await verdictsOf(runId, [scheduleId])).toEqual([
      expect.objectContaining({ subject: 'charge:expected-0', verdict: 'handed-to-saga' }),
    ]);
    const types = stack.events
      .scheduleEventsOf(scheduleId)
      .map((e) => e.type)
      .filter((t) => t !== 'gateway-charge-accepted');
    expect(types).toEqual([
      'schedule-created',
      'schedule-registered',
      'gateway-charge-reported',
      'gateway-cycle-charged',
    ]);
    const ledger = await stack.controls.ledger(charge);
    expect(ledger.entries.map((e) => [e.movement, e.amountMinor])).toEqual([['charged', 2_700]]);
  }, 240_000);
});
