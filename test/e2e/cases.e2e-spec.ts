/**
 * Cases end to end (issue 33 items 2 and 3): the four apps as processes on the real broker,
 * PostgreSQL and the sandbox over HTTP. An operation the gateway leaves unsettled becomes a case
 * that two people close: a return whose request the gateway never received (the sandbox drops
 * it) is alerted no-trace, a case is opened, one operator proposes "not done", the same person's
 * approval is refused, another person with the approver role approves, the saga publishes
 * `settled-by-decision` (never an ordinary event), and a return of the rest is then taken and
 * refunded once in the sandbox's ledger. A sale the gateway charged at another amount is settled
 * "done at the gateway's amount", the event carrying both amounts. Every step of a case, a
 * person's or the system's (opened, evidence added, proposed, approved, proposal rejected,
 * reopened), is a row of `admin_audit` and a `case-step-audited` event on the admin audit topic.
 * A PAN-eligibility check the gateway never received is decided "not done" the same way ("done"
 * refused: eligibility is the gateway's answer), and so is a card payment's create-card-ref whose
 * request and every re-ask the gateway never received (alerted after the hour, its case due after
 * CASE_AFTER_ALERT_HOURS: the orchestrator's clock is moved, so that test runs last).
 */
import { randomUUID } from 'node:crypto';
import {
  AdminAuditEvent,
  type CaseStepAudited,
  type PaymentEvent,
  TOPICS,
} from '@payments/contracts';
import { createPaymentGatewayClient } from '@payments/payment-gateway';
import { Client } from 'pg';
import { PaymentStack, SANDBOX_MERCHANT } from '../../scripts/stack/payment-stack';
import { oneStepPayout, panEligibility } from '../../scripts/stack/payout-commands';
import { TopicCollector } from '../support/adapter-harness';
import { waitFor } from '../support/kafka';
import { adminTokens, type E2eStack, startE2eStack } from '../support/e2e-stack';

/** The window after which the gateway's silence about a request reads as no trace. */
const NEVER_RECEIVED_SECONDS = 3;
/** An endpoint whose daily payout budget is 10,000 (PAYOUT_LIMITS below). */
const DAILY_LIMIT_ENDPOINT = '1111';
const ALICE = `alice-${randomUUID()}`;
const BOB = `bob-${randomUUID()}`;

let e2e: E2eStack;
let stack: PaymentStack;
const auditTopic = new TopicCollector(TOPICS.adminAudit);

beforeAll(async () => {
  e2e = await startE2eStack('cases', {
    env: {
      orchestrator: {
        NEVER_RECEIVED_RESEND_SECONDS: String(NEVER_RECEIVED_SECONDS),
        CASE_SWEEP_MS: '300',
        // The card-reference test (last) moves the orchestrator's clock past the alert and
        // CASE_AFTER_ALERT_HOURS (its test control).
        TEST_CONTROLS_ENABLED: 'true',
        PAYOUT_LIMITS: JSON.stringify({
          default: { maxMinor: 1_000_000, dailyLimitMinor: 10_000_000, approvalWindowSeconds: 600 },
          endpoints: { [DAILY_LIMIT_ENDPOINT]: { dailyLimitMinor: 10_000 } },
        }),
        ADMIN_TOKENS: adminTokens([
          { name: 'alice', role: 'operator', scope: 'all', token: ALICE },
          { name: 'bob', role: 'approver', scope: 'all', token: BOB },
        ]),
      },
      'gateway-adapter': {
        GATEWAY_RESPONSE_TIMEOUT_MS: '4000',
        // The injected faults would open the endpoint breaker (its own suite's subject).
        GATEWAY_BREAKER_FAILURES: '1000',
      },
    },
  });
  stack = e2e.stack;
  await auditTopic.start();
});

afterAll(async () => {
  await auditTopic.stop().catch(() => undefined);
  await e2e?.stop();
});

const admin = (method: 'GET' | 'POST', route: string, token: string, body?: unknown) =>
  stack.admin<Record<string, unknown>>(method, route, token, body);

/** Waits until `probe` answers, asking again every 200 ms. */
async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The case of a saga, once the case worker opened it. */
async function caseOf(sagaId: string): Promise<Record<string, unknown>> {
  return until(async () => {
    const { status, body } = await admin('GET', '/admin/cases', ALICE);
    if (status !== 200 || !Array.isArray(body))
      throw new Error(`GET /admin/cases: ${status} ${JSON.stringify(body)}`);
    return (body as Array<Record<string, unknown>>).find((c) => c.sagaId === sagaId);
  }, `a case for ${sagaId}`);
}

async function refunds(clientOrderId: string): Promise<number[]> {
  const ledger = await stack.controls.ledger(clientOrderId);
  return ledger.entries.filter((e) => e.movement === 'refunded').map((e) => e.amountMinor);
}

const eventsOf = (id: string): PaymentEvent[] => stack.events.distinctEventsOf(id);

/** A case's steps as audited: [step, actor, role, whether a command was sent]. */
type AuditedStep = [string, string, string, boolean];

/**
 * A case's steps, once `admin_audit` holds `expected` for it (its rows, in order), as the audit
 * topic shows them too: the same steps, actors and roles, each event a valid `case-step-audited`.
 */
async function expectAudited(caseId: string, expected: readonly AuditedStep[]): Promise<void> {
  const rowsOf = async (): Promise<AuditedStep[]> => {
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
      return rows.map((r) => [
        r.action.replace(/^case-/, ''),
        r.actor,
        r.role,
        r.command_id !== null,
      ]);
    } finally {
      await client.end();
    }
  };
  let rows: AuditedStep[] = [];
  await waitFor(async () => {
    rows = await rowsOf();
    return rows.length >= expected.length;
  }, `${expected.length} audited steps of case ${caseId}`);
  expect(rows).toEqual(expected);
  const onTopic = (): CaseStepAudited[] =>
    auditTopic.messages.flatMap((m) => {
      const parsed = AdminAuditEvent.safeParse(JSON.parse(m.value?.toString('utf8') ?? 'null'));
      return parsed.success &&
        parsed.data.type === 'case-step-audited' &&
        parsed.data.caseId === caseId
        ? [parsed.data]
        : [];
    });
  await waitFor(() => onTopic().length >= expected.length, `the steps of ${caseId} on the topic`);
  expect(
    onTopic().map((e): AuditedStep => [e.step, e.actor, e.role, e.commandId !== undefined]),
  ).toEqual(expected);
}

describe('cases: the one place where a person decides', () => {
  it('a return left no trace → a case → "not done" proposed by one operator, approved by another → settled-by-decision, and a return of the rest is refunded once', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 10_000 });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['approved'], 60_000);
    // The gateway never receives the return: the connection closes unanswered, nothing processed.
    await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      operation: 'RETURN',
      failBefore: 'drop',
      times: 1,
    });
    await stack.send(stack.return(sale.paymentId, 4_000));
    await stack.events.waitFor(
      sale.paymentId,
      (e) => e.type === 'outcome-unknown' && e.alert && e.concern === 'no-trace',
      90_000,
    );

    const opened = await caseOf(sale.paymentId);
    expect(opened).toMatchObject({ concern: 'no-trace', operation: 'return', status: 'open' });
    const id = String(opened.caseId);
    expect((opened.evidence as unknown[]).length).toBeGreaterThan(0);

    const proposed = await admin('POST', `/admin/cases/${id}/propose`, ALICE, {
      decision: 'not-done',
      reason: 'the gateway shows the sale as the order’s latest request; no refund at the acquirer',
    });
    expect(proposed).toMatchObject({ status: 200, body: { status: 'proposed' } });
    // An operator cannot approve; nor could the proposer, whatever their role.
    const own = await admin('POST', `/admin/cases/${id}/approve`, ALICE);
    expect(own.status).toBe(403);
    const approved = await admin('POST', `/admin/cases/${id}/approve`, BOB);
    expect(approved).toMatchObject({
      status: 200,
      body: { status: 'closed', decided: { by: 'alice', approvedBy: 'bob' } },
    });

    const settled = await stack.events.waitForType(sale.paymentId, ['settled-by-decision']);
    expect(settled.event).toMatchObject({
      operation: 'return',
      decision: 'not-done',
      caseId: id,
      decidedBy: 'alice',
      approvedBy: 'bob',
    });
    // Never an ordinary event for the decided return.
    expect(eventsOf(sale.paymentId).map((e) => e.type)).not.toContain('returned');
    expect(await refunds(sale.paymentId)).toEqual([]);

    // The return of the rest (all of it: the decided return moved nothing) is taken, once.
    await stack.send(stack.return(sale.paymentId));
    const returned = await stack.events.waitForType(sale.paymentId, ['returned'], 60_000);
    expect(returned.event).toMatchObject({ amount: { minor: 10_000 } });
    expect(await refunds(sale.paymentId)).toEqual([10_000]);
    // Each step audited: the system opened it, alice proposed, bob approved (sending the saga
    // its settle-by-decision); alice's refused approval left no step.
    await expectAudited(id, [
      ['opened', 'system', 'system', false],
      ['proposed', 'alice', 'operator', false],
      ['approved', 'bob', 'approver', true],
    ]);
  });

  it('the same person cannot approve their own proposal (CASE_SAME_PERSON); an amount mismatch is settled done at the gateway’s amount, the event carrying both', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 10_000 });
    await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      operation: 'SALE',
      processedAmountMinor: 9_000,
    });
    await stack.send(sale);
    await stack.events.waitFor(
      sale.paymentId,
      (e) => e.type === 'outcome-unknown' && e.alert && e.concern === 'amount-mismatch',
      90_000,
    );
    const opened = await caseOf(sale.paymentId);
    expect(opened).toMatchObject({
      concern: 'amount-mismatch',
      requestedAmount: { minor: 10_000 },
      reportedAmount: { minor: 9_000 },
    });
    const id = String(opened.caseId);
    // Bob proposes (an approver may propose); his own approval is refused.
    const proposed = await admin('POST', `/admin/cases/${id}/propose`, BOB, {
      decision: 'done',
      amount: { minor: 9_000, currency: 'USD' },
      amountWhy: 'the gateway charged 9,000 (its status reply); the order asked 10,000',
      reason: 'the acquirer statement shows 9,000 captured',
    });
    expect(proposed.status).toBe(200);
    const own = await admin('POST', `/admin/cases/${id}/approve`, BOB);
    expect(own).toMatchObject({ status: 409, body: { error: { code: 'CASE_SAME_PERSON' } } });
    // Alice withdraws nothing (not hers, not an approver): refused.
    const withdraw = await admin('POST', `/admin/cases/${id}/reject-proposal`, ALICE, {
      reason: 'no',
    });
    expect(withdraw.status).toBe(409);
    // A second approver is needed: this stack names only bob, so the proposal is withdrawn by
    // him and proposed by alice instead, then approved by bob.
    expect(
      (await admin('POST', `/admin/cases/${id}/reject-proposal`, BOB, { reason: 'four eyes' }))
        .status,
    ).toBe(200);
    expect(
      (
        await admin('POST', `/admin/cases/${id}/propose`, ALICE, {
          decision: 'done',
          amount: { minor: 9_000, currency: 'USD' },
          amountWhy: 'the gateway charged 9,000 (its status reply); the order asked 10,000',
          reason: 'the acquirer statement shows 9,000 captured',
        })
      ).status,
    ).toBe(200);
    expect((await admin('POST', `/admin/cases/${id}/approve`, BOB)).status).toBe(200);

    const settled = await stack.events.waitForType(sale.paymentId, ['settled-by-decision']);
    expect(settled.event).toMatchObject({
      operation: 'sale',
      decision: 'done',
      amount: { minor: 9_000, currency: 'USD' },
      requestedAmount: { minor: 10_000, currency: 'USD' },
      amountWhy: expect.stringContaining('9,000'),
    });
    expect(eventsOf(sale.paymentId).map((e) => e.type)).not.toContain('approved');
    await expectAudited(id, [
      ['opened', 'system', 'system', false],
      ['proposed', 'bob', 'approver', false],
      ['proposal-rejected', 'bob', 'approver', false],
      ['proposed', 'alice', 'operator', false],
      ['approved', 'bob', 'approver', true],
    ]);
  });

  it('a gateway answer that contradicts the decision reopens the case with an alert; the decision stands', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 10_000 });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['approved'], 60_000);
    // The return reaches the gateway only long after the adapter gave up on it (unknown): the
    // status replies show the sale as the order's latest request meanwhile (no trace).
    await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      operation: 'RETURN',
      latencyMs: 25_000,
      times: 1,
    });
    await stack.send(stack.return(sale.paymentId, 3_000));
    await stack.events.waitFor(
      sale.paymentId,
      (e) => e.type === 'outcome-unknown' && e.alert && e.concern === 'no-trace',
      90_000,
    );
    const id = String((await caseOf(sale.paymentId)).caseId);
    await admin('POST', `/admin/cases/${id}/propose`, ALICE, {
      decision: 'not-done',
      reason: 'no trace of the return at the gateway',
    });
    expect((await admin('POST', `/admin/cases/${id}/approve`, BOB)).status).toBe(200);
    const settled = await stack.events.waitForType(sale.paymentId, ['settled-by-decision']);

    // The gateway processes the return after all: its callback brings a status query about it.
    const reopened = await stack.events.waitForType(sale.paymentId, ['case-reopened'], 90_000);
    expect(reopened.event).toMatchObject({
      caseId: id,
      decision: 'not-done',
      answer: 'succeeded',
      alert: true,
    });
    // History stands: the decision's event is where it was, and no ordinary event rewrites it.
    const types = eventsOf(sale.paymentId).map((e) => `${e.version}:${e.type}`);
    expect(types).toContain(`${settled.event.version}:settled-by-decision`);
    expect(types.filter((t) => t.endsWith(':returned'))).toEqual([]);
    const shown = await until(async () => {
      const { body } = await admin('GET', `/admin/cases/${id}`, ALICE);
      return body.status === 'reopened' ? body : undefined;
    }, 'the case reopened');
    expect(shown).toMatchObject({ decided: { by: 'alice', approvedBy: 'bob' } });
    // The contradicting answer came in as evidence, and the case reopened: both the system's.
    await expectAudited(id, [
      ['opened', 'system', 'system', false],
      ['proposed', 'alice', 'operator', false],
      ['approved', 'bob', 'approver', true],
      ['evidence-added', 'system', 'system', false],
      ['reopened', 'system', 'system', false],
    ]);
  });

  it('a payout left no trace decided "not done" releases the day\'s budget: the next payout it held back is paid', async () => {
    const first = oneStepPayout({ endpointId: DAILY_LIMIT_ENDPOINT, amountMinor: 8_000 });
    // The gateway never receives it: the connection closes unanswered, nothing processed.
    await stack.controls.addFault({
      clientOrderId: first.payoutId,
      operation: 'PAYOUT',
      failBefore: 'drop',
      times: 1,
    });
    await stack.sendRaw(first);
    await stack.events.waitForPayout(first.payoutId, ['payout-outcome-unknown'], 60_000);
    const id = await until(async () => {
      const { body } = await admin('GET', '/admin/cases', ALICE);
      const found = (body as unknown as Array<Record<string, unknown>>).find(
        (c) => c.sagaId === first.payoutId,
      );
      return found === undefined ? undefined : String(found.caseId);
    }, 'a case for the payout');
    await admin('POST', `/admin/cases/${id}/propose`, ALICE, {
      decision: 'not-done',
      reason: 'the gateway has no such order; nothing left the account',
    });
    expect((await admin('POST', `/admin/cases/${id}/approve`, BOB)).status).toBe(200);
    const settled = await stack.events.waitForPayout(first.payoutId, [
      'payout-settled-by-decision',
    ]);
    expect(settled.event).toMatchObject({ decision: 'not-done', caseId: id });

    // 8,000 of 10,000 would be refused while the first held its reservation: released, it is paid.
    const second = oneStepPayout({ endpointId: DAILY_LIMIT_ENDPOINT, amountMinor: 8_000 });
    await stack.sendRaw(second);
    const final = await stack.events.waitForPayout(
      second.payoutId,
      ['paid-out', 'payout-refused', 'payout-declined', 'payout-failed'],
      60_000,
    );
    expect(final.event.type).toBe('paid-out');
    const ledger = await stack.controls.ledger(first.payoutId);
    expect(ledger.entries.filter((e) => e.movement === 'paid-out')).toEqual([]);
  });

  it('a PAN-eligibility check the gateway never received → a case → "done" refused, "not done" approved by a second person → settled-by-decision', async () => {
    // A card reference to check, made the way a merchant would (setup, as in payouts e2e).
    const sale = stack.sale({ cvv: '123', amountMinor: 100 });
    await stack.send(sale);
    const approved = await stack.events.waitForType(sale.paymentId, ['approved'], 60_000);
    const client = createPaymentGatewayClient({
      baseUrl: `${stack.urls['gateway-sandbox']}/paynet`,
      endpoint: { endpointId: SANDBOX_MERCHANT.plainEndpoint },
      login: SANDBOX_MERCHANT.login,
      controlKey: SANDBOX_MERCHANT.controlKey,
    });
    const ref = await client.call('v2/create-card-ref', {
      client_orderid: sale.paymentId,
      orderid: (approved.event as { gatewayOrderId?: string }).gatewayOrderId ?? '',
    });
    await client.close();
    if (ref.outcome !== 'accepted') throw new Error(`create-card-ref: ${ref.outcome}`);

    const check = panEligibility(ref.reply.cardRefId);
    // The gateway never receives it, nor its repeat: each connection closes unanswered.
    await stack.controls.addFault({
      clientOrderId: check.checkId,
      operation: 'PAN_ELIGIBILITY_SEND',
      failBefore: 'drop',
    });
    await stack.sendRaw(check);
    await stack.events.waitForPayout(check.checkId, ['pan-eligibility-outcome-unknown'], 60_000);
    const id = await until(async () => {
      const { body } = await admin('GET', '/admin/cases', ALICE);
      const found = (body as unknown as Array<Record<string, unknown>>).find(
        (c) => c.sagaId === check.checkId,
      );
      return found === undefined ? undefined : String(found.caseId);
    }, 'a case for the check');
    // "Done" names an answer only the gateway can give: refused when the saga is told.
    expect(
      (
        await admin('POST', `/admin/cases/${id}/propose`, ALICE, {
          decision: 'done',
          amount: { minor: 0, currency: 'USD' },
          reason: 'eligible, says the acquirer',
        })
      ).status,
    ).toBe(200);
    const refused = await admin('POST', `/admin/cases/${id}/approve`, BOB);
    expect(refused).toMatchObject({
      status: 409,
      body: { error: { code: 'CASE_DECISION_INVALID' } },
    });
    expect(
      (await admin('POST', `/admin/cases/${id}/reject-proposal`, BOB, { reason: 'not ours' }))
        .status,
    ).toBe(200);
    expect(
      (
        await admin('POST', `/admin/cases/${id}/propose`, ALICE, {
          decision: 'not-done',
          reason: 'the gateway has no such check; the merchant asks again',
        })
      ).status,
    ).toBe(200);
    expect((await admin('POST', `/admin/cases/${id}/approve`, BOB)).status).toBe(200);
    const settled = await stack.events.waitForPayout(check.checkId, [
      'pan-eligibility-settled-by-decision',
    ]);
    expect(settled.event).toMatchObject({
      decision: 'not-done',
      caseId: id,
      decidedBy: 'alice',
      approvedBy: 'bob',
    });
    const types = stack.events.payoutEventsOf(check.checkId).map((e) => e.event.type);
    expect(types).not.toContain('pan-eligibility-answered');
    await expectAudited(id, [
      ['opened', 'system', 'system', false],
      ['proposed', 'alice', 'operator', false],
      ['proposal-rejected', 'bob', 'approver', false],
      ['proposed', 'alice', 'operator', false],
      ['approved', 'bob', 'approver', true],
    ]);
  });

  // Last: it moves the orchestrator's clock forward by a day.
  it('a create-card-ref whose request and re-asks the gateway never received → alerted → a case → "done" refused, "not done" approved by a second person → settled-by-decision; a new create-card-ref then makes the reference', async () => {
    const sale = stack.sale({ cvv: '123', amountMinor: 100 });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['approved'], 60_000);
    // The gateway never receives the request, nor any re-ask of it: each connection closes.
    const fault = await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      operation: 'CARDREF',
      failBefore: 'drop',
    });
    const base = () => ({
      commandId: randomUUID(),
      merchant: { endpointId: SANDBOX_MERCHANT.plainEndpoint },
      occurredAt: new Date().toISOString(),
    });
    await stack.sendRaw({ type: 'create-card-ref', ...base(), paymentId: sale.paymentId });
    const unknown = await stack.events.waitForType(
      sale.paymentId,
      ['card-reference-unknown'],
      60_000,
    );
    const requestId = (unknown.event as { requestId: string }).requestId;
    // Past the alert hour and CASE_AFTER_ALERT_HOURS (24): alerted, then its case is due.
    await stack.advanceOrchestratorClock(25 * 3_600);
    await until(
      async () =>
        eventsOf(sale.paymentId).some(
          (e) => e.type === 'card-reference-unknown' && e.alert && e.requestId === requestId,
        ) || undefined,
      'the card reference alerted',
    );
    const opened = await caseOf(sale.paymentId);
    expect(opened).toMatchObject({
      flow: 'card-payment',
      operation: 'create-card-ref',
      requestId,
      concern: 'alerted-too-long',
      status: 'open',
    });
    expect((opened.evidence as Array<{ ref: string }>).map((e) => e.ref)).toEqual(
      expect.arrayContaining([expect.stringMatching(/^card-reference-unknown v/)]),
    );
    const id = String(opened.caseId);
    // A reference id is the gateway's answer alone: "done" is refused when the saga is told.
    expect(
      (
        await admin('POST', `/admin/cases/${id}/propose`, ALICE, {
          decision: 'done',
          amount: { minor: 0, currency: 'USD' },
          reason: 'made, says the merchant',
        })
      ).status,
    ).toBe(200);
    expect(await admin('POST', `/admin/cases/${id}/approve`, BOB)).toMatchObject({
      status: 409,
      body: { error: { code: 'CASE_DECISION_INVALID' } },
    });
    expect(
      (await admin('POST', `/admin/cases/${id}/reject-proposal`, BOB, { reason: 'not ours' }))
        .status,
    ).toBe(200);
    expect(
      (
        await admin('POST', `/admin/cases/${id}/propose`, ALICE, {
          decision: 'not-done',
          reason: 'the gateway never received the request nor any re-ask; no reference exists',
        })
      ).status,
    ).toBe(200);
    // The proposer cannot approve (an operator: the approver role is needed, and another person).
    expect(await admin('POST', `/admin/cases/${id}/approve`, ALICE)).toMatchObject({
      status: 403,
    });
    expect((await admin('POST', `/admin/cases/${id}/approve`, BOB)).status).toBe(200);
    const settled = await stack.events.waitForType(sale.paymentId, ['settled-by-decision']);
    expect(settled.event).toMatchObject({
      operation: 'create-card-ref',
      requestId,
      decision: 'not-done',
      caseId: id,
      decidedBy: 'alice',
      approvedBy: 'bob',
    });
    expect(eventsOf(sale.paymentId).map((e) => e.type)).not.toContain('card-ref-created');
    await expectAudited(id, [
      ['opened', 'system', 'system', false],
      ['proposed', 'alice', 'operator', false],
      ['proposal-rejected', 'bob', 'approver', false],
      ['proposed', 'alice', 'operator', false],
      ['approved', 'bob', 'approver', true],
    ]);
    // The gateway works again: a new create-card-ref is taken and makes the reference.
    await stack.controls.removeFault(fault.id);
    await stack.sendRaw({ type: 'create-card-ref', ...base(), paymentId: sale.paymentId });
    await stack.events.waitForType(sale.paymentId, ['card-ref-created'], 60_000);
  });
});
