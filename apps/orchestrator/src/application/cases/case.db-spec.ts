/**
 * The case worker's sweep against the migrated schema (PostgreSQL alone, the clock in the test's
 * hand): an alerted operation opens one case; the gateway's evidence settling the operation first
 * closes it (actor `system`); a saga's contradiction of a decision reopens it — every step a row of
 * `admin_audit` and a `case-step-audited` event in the outbox, in the case's transaction.
 */
import { randomUUID } from 'node:crypto';
import { CaseStepAudited, type GatewayResult } from '@payments/contracts';
import { MERCHANT, SCHEDULE_ID } from '@payments/contracts/testing';
import type { OrchestratorConfig } from '../../config';
import type { CaseRecord } from '../../domain/cases/case';
import { OutboxWriter } from '../../runtime/outbox/outbox.writer';
import type { SagaRuntime } from '../../runtime/saga-runtime';
import { orchestratorFixture } from '../../../test/kits/orchestrator.fixture';
import * as schedules from '../../../test/kits/recurring-schedule.kit';
import { chargeSubjectId } from '../../flows/recurring-schedule/domain/gateway-charged';
import { recurringScheduleFlow } from '../../flows/recurring-schedule/recurring-schedule.flow';
import { CaseService } from './case.service';

const config = {
  cases: { afterAlertHours: 24, sweepMs: 1000, workerEnabled: false },
} as unknown as OrchestratorConfig;

describe('case sweep (real PostgreSQL)', () => {
  const orch = orchestratorFixture({
    name: 'cases',
    poolSize: 2,
    start: '2026-03-01T12:00:00.000Z',
  });
  let service: CaseService;

  beforeAll(() => {
    // The sweep sends the saga nothing: no runtime needed.
    service = new CaseService(
      orch.database,
      orch.clock,
      {} as SagaRuntime,
      new OutboxWriter(),
      config,
    );
  });

  async function saga(state: object): Promise<string> {
    const id = randomUUID();
    await orch.dataSource.query(
      `INSERT INTO sagas (id, flow, endpoint_id, kind, status, state, version, client_order_id, created_at)
       VALUES ($1, 'card-payment', '1113', 'sale', 'approved', $2, 3, $4, $3)`,
      [id, { paymentId: id, merchant: { endpointId: '1113' }, ...state }, orch.clock.now(), id],
    );
    return id;
  }

  /** A schedule the gateway charges (its stored state as the schedule flow writes it). */
  async function schedule(state: object): Promise<string> {
    const id = randomUUID();
    await orch.dataSource.query(
      `INSERT INTO sagas (id, flow, endpoint_id, kind, status, state, version, client_order_id, created_at)
       VALUES ($1, 'recurring-schedule', '1113', 'schedule', 'registered', $2, 3, $4, $3)`,
      [id, scheduleState(id, state), orch.clock.now(), id],
    );
    return id;
  }

  const scheduleState = (id: string, state: object) => ({
    terms: {
      scheduleId: id,
      merchant: { endpointId: '1113' },
      amount: { minor: 1_500, currency: 'EUR' },
    },
    charges: [],
    ...state,
  });

  const OPERATOR = { name: 'alice', role: 'operator', scope: 'all' } as const;

  const setState = (id: string, state: object) =>
    orch.dataSource.query(`UPDATE sagas SET state = $2 WHERE id = $1`, [
      id,
      { paymentId: id, merchant: { endpointId: '1113' }, ...state },
    ]);

  async function history(id: string, version: number, event: Record<string, unknown>) {
    await orch.dataSource.query(
      `INSERT INTO saga_history (saga_id, version, event_id, event_type, event, command_id, occurred_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [id, version, randomUUID(), event.type, event, randomUUID(), orch.clock.now()],
    );
  }

  const caseOf = async (sagaId: string): Promise<CaseRecord | undefined> => {
    const [row] = await orch.dataSource.query<Array<{ record: CaseRecord }>>(
      `SELECT record FROM cases WHERE saga_id = $1`,
      [sagaId],
    );
    return row?.record;
  };

  const audited = async (sagaId: string) => {
    const rows = await orch.dataSource.query<Array<{ action: string; actor: string }>>(
      `SELECT action, actor FROM admin_audit WHERE saga_id = $1 ORDER BY (detail->>'index')::int`,
      [sagaId],
    );
    const events = (
      await orch.dataSource.query<Array<{ payload: Record<string, unknown> }>>(
        `SELECT payload FROM outbox WHERE topic = 'payments.admin.audit.v1' ORDER BY sequence`,
      )
    )
      .map((r) => r.payload)
      .filter((e) => e.sagaId === sagaId);
    for (const e of events) expect(CaseStepAudited.safeParse(e).success).toBe(true);
    expect(events.map((e) => [`case-${String(e.step)}`, e.actor])).toEqual(
      rows.map((r) => [r.action, r.actor]),
    );
    return rows.map((r) => `${r.action} by ${r.actor}`);
  };

  it('an alerted operation opens one case; settled by the gateway first, the case closes by the system', async () => {
    const requestId = randomUUID();
    const inFlight = {
      operation: 'return',
      requestId,
      stage: 'outcome-unknown',
      alerted: true,
      concern: 'no-trace',
      unknownSince: '2026-03-01T11:00:00.000Z',
    };
    const id = await saga({ inFlight });
    await history(id, 1, {
      type: 'outcome-unknown',
      requestId,
      alert: true,
      concern: 'no-trace',
    });
    expect((await service.sweep()).opened).toBeGreaterThanOrEqual(1);
    expect(await caseOf(id)).toMatchObject({ concern: 'no-trace', status: 'open', requestId });
    // Swept again: still one case, nothing new audited.
    await service.sweep();
    expect(await audited(id)).toEqual(['case-opened by system']);

    // The gateway's answer settles the return: nothing in flight any more.
    orch.clock.set('2026-03-01T12:05:00.000Z');
    await history(id, 2, { type: 'returned', requestId, amount: { minor: 100, currency: 'USD' } });
    await setState(id, {});
    expect((await service.sweep()).closed).toBeGreaterThanOrEqual(1);
    const closed = await caseOf(id);
    expect(closed?.status).toBe('closed');
    expect(closed?.decided).toBeUndefined();
    expect(closed?.evidence.at(-1)?.summary).toContain('returned');
    expect(await audited(id)).toEqual([
      'case-opened by system',
      'case-evidence-added by system',
      'case-closed by system',
    ]);
    // A closed case is not closed again.
    await service.sweep();
    expect(await audited(id)).toHaveLength(3);
  });

  it('an alert without a concern waits CASE_AFTER_ALERT_HOURS; the operation still in flight keeps its case open', async () => {
    const requestId = randomUUID();
    const id = await saga({
      inFlight: {
        operation: 'sale',
        requestId,
        stage: 'outcome-unknown',
        alerted: true,
        unknownSince: orch.clock.now().toISOString(),
      },
    });
    await service.sweep();
    expect(await caseOf(id)).toBeUndefined();
    orch.clock.set(new Date(orch.clock.now().getTime() + 24 * 3_600_000));
    await service.sweep();
    expect(await caseOf(id)).toMatchObject({ concern: 'alerted-too-long', status: 'open' });
    await service.sweep();
    expect((await caseOf(id))?.status).toBe('open');
  });

  it("a saga's contradiction of its decision reopens the case, the answer its evidence: both the system's steps", async () => {
    const requestId = randomUUID();
    const id = await saga({
      inFlight: {
        operation: 'return',
        requestId,
        stage: 'outcome-unknown',
        alerted: true,
        concern: 'no-trace',
        unknownSince: '2026-03-01T11:00:00.000Z',
      },
    });
    await service.sweep();
    const opened = await caseOf(id);
    if (opened === undefined) throw new Error('no case');
    // Decided by two people (as the service's steps leave it), then the saga took it.
    const decided: CaseRecord = {
      ...opened,
      status: 'closed',
      decided: {
        proposal: { decision: 'not-done' },
        reason: 'no trace',
        by: 'alice',
        at: opened.openedAt,
        approvedBy: 'bob',
        approvedAt: opened.openedAt,
      },
    };
    await orch.dataSource.query(`UPDATE cases SET status = 'closed', record = $2 WHERE id = $1`, [
      opened.caseId,
      decided,
    ]);
    await history(id, 3, {
      type: 'case-reopened',
      requestId,
      caseId: opened.caseId,
      decision: 'not-done',
      answer: 'succeeded',
      alert: true,
    });
    await setState(id, {
      decided: { requestId, caseId: opened.caseId, decision: 'not-done', reopened: true },
    });
    expect((await service.sweep()).reopened).toBe(1);
    const reopened = await caseOf(id);
    expect(reopened).toMatchObject({
      status: 'reopened',
      decided: { by: 'alice', approvedBy: 'bob' },
    });
    expect(reopened?.evidence.at(-1)?.summary).toContain('answer succeeded');
    expect(await audited(id)).toEqual([
      'case-opened by system',
      'case-evidence-added by system',
      'case-reopened by system',
    ]);
    // Not reopened twice.
    await service.sweep();
    expect(await audited(id)).toHaveLength(3);
  });

  it("a card payment's create-card-ref alerted opens its case with its evidence (no amount: a reference moves none); answered by the gateway first, it closes by the system", async () => {
    const requestId = randomUUID();
    const cardRefRequest = {
      operation: 'create-card-ref',
      requestId,
      commandId: randomUUID(),
      requestedAt: '2026-03-01T10:00:00.000Z',
      unknownSince: '2026-03-01T10:00:00.000Z',
      alerted: true,
    };
    // The sale settled long ago: nothing in flight but the card reference.
    const id = await saga({ amount: { minor: 10_000, currency: 'EUR' }, cardRefRequest });
    await history(id, 4, { type: 'card-ref-requested', requestId });
    await history(id, 5, {
      type: 'card-reference-unknown',
      requestId,
      operation: 'create-card-ref',
      alert: false,
    });
    await history(id, 6, {
      type: 'card-reference-unknown',
      requestId,
      operation: 'create-card-ref',
      alert: true,
    });
    // Alerted without a concern: due after CASE_AFTER_ALERT_HOURS of being unknown.
    orch.clock.set('2026-03-02T10:00:00.000Z');
    expect((await service.sweep()).opened).toBeGreaterThanOrEqual(1);
    const opened = await caseOf(id);
    expect(opened).toMatchObject({
      flow: 'card-payment',
      operation: 'create-card-ref',
      requestId,
      concern: 'alerted-too-long',
      status: 'open',
    });
    expect(opened?.requestedAmount).toBeUndefined();
    expect(opened?.evidence.map((e) => e.ref)).toEqual([
      'card-ref-requested v4',
      'card-reference-unknown v5',
      'card-reference-unknown v6',
    ]);
    // Still waiting for the reference: swept again, the case stays open, once.
    await service.sweep();
    expect((await caseOf(id))?.status).toBe('open');
    expect(await audited(id)).toEqual(['case-opened by system']);

    // A re-ask's answer carried the reference: the saga no longer waits; the case closes.
    await history(id, 7, { type: 'card-ref-created', requestId, cardRef: { refId: '10901' } });
    await setState(id, { cardRef: { refId: '10901' } });
    expect((await service.sweep()).closed).toBeGreaterThanOrEqual(1);
    expect((await caseOf(id))?.status).toBe('closed');
    expect((await caseOf(id))?.evidence.at(-1)?.summary).toContain('card-ref-created');
  });

  it('a get-card-info alerted opens no case (it only reads; asked again until answered)', async () => {
    const id = await saga({
      cardRefRequest: {
        operation: 'get-card-info',
        requestId: randomUUID(),
        commandId: randomUUID(),
        requestedAt: '2026-03-01T10:00:00.000Z',
        unknownSince: '2026-03-01T10:00:00.000Z',
        alerted: true,
      },
    });
    orch.clock.set('2026-03-04T10:00:00.000Z');
    await service.sweep();
    expect(await caseOf(id)).toBeUndefined();
  });

  it("a schedule's registration left with no trace opens a case listing its events; a decision is refused (a registration is not settled by decision), the case stays open", async () => {
    const requestId = randomUUID();
    const id = await schedule({
      status: 'registering',
      registration: {
        operation: 'create-recurring-payment',
        requestId,
        commandId: randomUUID(),
        requestedAt: '2026-03-01T10:00:00.000Z',
        stage: 'outcome-unknown',
        unknownSince: '2026-03-01T10:00:00.000Z',
        alerted: true,
        concern: 'no-trace',
      },
    });
    await history(id, 1, { type: 'schedule-created' });
    await history(id, 2, { type: 'schedule-registration-unknown', reason: 'timeout' });
    await history(id, 3, {
      type: 'schedule-registration-unknown',
      reason: 'no trace',
      alert: true,
      concern: 'no-trace',
    });
    expect((await service.sweep()).opened).toBeGreaterThanOrEqual(1);
    const opened = await caseOf(id);
    expect(opened).toMatchObject({
      flow: 'recurring-schedule',
      operation: 'create-recurring-payment',
      requestId,
      concern: 'no-trace',
      status: 'open',
      requestedAmount: { minor: 1_500, currency: 'EUR' },
    });
    expect(opened?.evidence.map((e) => e.ref)).toEqual([
      'schedule-registration-unknown v2',
      'schedule-registration-unknown v3',
    ]);
    for (const proposal of [{ decision: 'not-done' as const }]) {
      const refused = await service.propose(OPERATOR, opened?.caseId ?? '', proposal, 'no trace');
      expect(refused).toMatchObject({ kind: 'refused', code: 'CASE_FLOW_NOT_SETTLEABLE' });
    }
    expect((await caseOf(id))?.status).toBe('open');
    expect(await audited(id)).toEqual(['case-opened by system']);

    // "Refresh and wait" asks the schedule's own refresh (a status query), the case stays open.
    const sent: unknown[] = [];
    const refreshing = new CaseService(
      orch.database,
      orch.clock,
      { process: (inputs: unknown[]) => Promise.resolve(void sent.push(...inputs)) } as never,
      new OutboxWriter(),
      config,
    );
    const refresh = await refreshing.propose(
      OPERATOR,
      opened?.caseId ?? '',
      { decision: 'refresh-and-wait' },
      'ask the gateway again',
    );
    expect(refresh.kind).toBe('ok');
    expect(sent).toMatchObject([
      {
        kind: 'command',
        raw: { type: 'refresh-schedule-status', scheduleId: id, merchant: { endpointId: '1113' } },
      },
    ]);
    expect((await caseOf(id))?.status).toBe('open');

    // Registered after all (a status reply): the case closes by the system.
    await setState(id, scheduleState(id, { status: 'registered', recurringPaymentId: 'rp-1' }));
    expect((await service.sweep()).closed).toBeGreaterThanOrEqual(1);
    expect((await caseOf(id))?.status).toBe('closed');
  });

  it("a schedule's charge left unknown, and a cycle alerted not-found, each open a case with their events; the cycle's closes once its charge is seen", async () => {
    const chargeRequest = randomUUID();
    const id = await schedule({
      status: 'registered',
      recurringPaymentId: 'rp-2',
      missingCycles: [3],
      charges: [
        {
          gatewayOrderId: 'gw-9001',
          clientOrderId: 'x-2',
          cycle: 2,
          outcome: 'confirming',
          op: {
            operation: 'rebill',
            requestId: chargeRequest,
            commandId: randomUUID(),
            requestedAt: '2026-03-01T10:00:00.000Z',
            stage: 'outcome-unknown',
            unknownSince: '2026-03-01T10:00:00.000Z',
            alerted: true,
            concern: 'amount-mismatch',
          },
        },
      ],
    });
    await history(id, 4, { type: 'gateway-charge-reported', cycle: 2, gatewayOrderId: 'gw-9001' });
    await history(id, 5, {
      type: 'gateway-charge-outcome-unknown',
      cycle: 2,
      gatewayOrderId: 'gw-9001',
      alert: true,
      concern: 'amount-mismatch',
      reportedAmount: { minor: 1_700, currency: 'EUR' },
    });
    await history(id, 6, {
      type: 'gateway-charge-alert',
      cycle: 3,
      clientOrderId: 'x-3',
      reason: 'not-found',
    });
    expect((await service.sweep()).opened).toBeGreaterThanOrEqual(2);
    const cases = await orch.dataSource.query<Array<{ record: CaseRecord }>>(
      `SELECT record FROM cases WHERE saga_id = $1 ORDER BY record->>'concern'`,
      [id],
    );
    expect(cases.map((c) => c.record)).toMatchObject([
      {
        operation: 'rebill',
        requestId: chargeRequest,
        concern: 'amount-mismatch',
        reportedAmount: { minor: 1_700, currency: 'EUR' },
        evidence: [
          { ref: 'gateway-charge-reported v4' },
          { ref: 'gateway-charge-outcome-unknown v5' },
        ],
      },
      { operation: 'rebill', concern: 'no-trace', evidence: [{ ref: 'gateway-charge-alert v6' }] },
    ]);
    // Swept again: no second case for either.
    await service.sweep();
    expect(
      await orch.dataSource.query(`SELECT id FROM cases WHERE saga_id = $1`, [id]),
    ).toHaveLength(2);

    // The cycle alerted not-found names no gateway order: no decision, "refresh and wait" only.
    const cycleCase = cases.map((c) => c.record).find((r) => r.concern === 'no-trace');
    expect(
      await service.propose(OPERATOR, cycleCase?.caseId ?? '', { decision: 'not-done' }, 'none'),
    ).toMatchObject({ kind: 'refused', code: 'CASE_FLOW_NOT_SETTLEABLE' });

    // The cycle's charge is seen (no longer missing); the other charge still being confirmed.
    await setState(
      id,
      scheduleState(id, {
        status: 'registered',
        recurringPaymentId: 'rp-2',
        missingCycles: [],
        charges: [
          {
            gatewayOrderId: 'gw-9001',
            clientOrderId: 'x-2',
            cycle: 2,
            outcome: 'confirming',
            op: { operation: 'rebill', requestId: chargeRequest, alerted: true },
          },
        ],
      }),
    );
    await service.sweep();
    const after = await orch.dataSource.query<Array<{ record: CaseRecord }>>(
      `SELECT record FROM cases WHERE saga_id = $1 ORDER BY record->>'concern'`,
      [id],
    );
    expect(after.map((c) => c.record.status)).toEqual(['open', 'closed']);
  });
});

/**
 * A gateway charge of a registered schedule decided in a case, through the real schedule flow on
 * the saga runtime (PostgreSQL alone): the saga seeded with the history the flow itself decided (a
 * charge reported, its status at another amount: unknown, alerted amount-mismatch).
 */
describe("a schedule's charge decided in a case (real PostgreSQL, the schedule flow)", () => {
  const orch = orchestratorFixture({
    name: 'cases_schedule',
    poolSize: 2,
    start: '2026-03-01T12:00:00.000Z',
    flows: [recurringScheduleFlow(schedules.GATEWAY_POLICY)],
  });
  const OPERATOR = { name: 'alice', role: 'operator', scope: 'all' } as const;
  const APPROVER = { name: 'bob', role: 'approver', scope: 'all' } as const;
  const ORDER = '1000007';
  const SUBJECT = chargeSubjectId(SCHEDULE_ID, ORDER);
  const eur = (minor: number) => ({ minor, currency: 'EUR' });
  const approved = (minor: number) => ({
    kind: 'accepted' as const,
    gatewayOrderId: ORDER,
    report: { status: 'approved' as const, gatewayOrderId: ORDER, amount: eur(minor) },
  });
  const statusReply = (result: GatewayResult['result']): GatewayResult => ({
    requestId: randomUUID(),
    paymentId: SCHEDULE_ID,
    operation: 'status',
    subjectRequestId: SUBJECT,
    attempt: 1,
    result,
    completedAt: orch.clock.now().toISOString(),
  });

  let service: CaseService;
  beforeAll(async () => {
    service = new CaseService(orch.database, orch.clock, orch.runtime, new OutboxWriter(), config);
    const seeded = schedules
      .registered()
      .and(schedules.chargeCallback(1, ORDER))
      .and(
        schedules.statusAnswer(
          { requestId: randomUUID(), subjectRequestId: SUBJECT },
          approved(99_900),
        ),
      );
    const state = seeded.state;
    await orch.dataSource.query(
      `INSERT INTO sagas (id, flow, endpoint_id, kind, status, state, version, client_order_id, created_at)
       VALUES ($1, 'recurring-schedule', $2, 'schedule', $3, $4, $5, $7, $6)`,
      [
        SCHEDULE_ID,
        MERCHANT.endpointId,
        state.status,
        state,
        state.version,
        orch.clock.now(),
        SCHEDULE_ID,
      ],
    );
    for (const event of seeded.events)
      await orch.dataSource.query(
        `INSERT INTO saga_history (saga_id, version, event_id, event_type, event, command_id, occurred_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [
          SCHEDULE_ID,
          event.version,
          randomUUID(),
          event.type,
          event,
          event.commandId,
          event.occurredAt,
        ],
      );
  });

  const caseOf = async (): Promise<CaseRecord | undefined> => {
    const [row] = await orch.dataSource.query<Array<{ record: CaseRecord }>>(
      `SELECT record FROM cases WHERE saga_id = $1`,
      [SCHEDULE_ID],
    );
    return row?.record;
  };
  const eventsOf = async (type: string) =>
    (
      await orch.dataSource.query<Array<{ event: Record<string, unknown> }>>(
        `SELECT event FROM saga_history WHERE saga_id = $1 AND event_type = $2 ORDER BY version`,
        [SCHEDULE_ID, type],
      )
    ).map((r) => r.event);

  it('proposed "done at the gateway\'s amount" by one person, approved by another: the schedule publishes schedule-charge-settled-by-decision (both amounts), the case closes; a contradicting answer reopens it', async () => {
    expect((await service.sweep()).opened).toBe(1);
    const opened = await caseOf();
    expect(opened).toMatchObject({
      flow: 'recurring-schedule',
      operation: 'rebill',
      requestId: SUBJECT,
      concern: 'amount-mismatch',
      status: 'open',
    });
    const caseId = opened?.caseId ?? '';
    const proposed = await service.propose(
      OPERATOR,
      caseId,
      { decision: 'done', amount: eur(99_900), amountWhy: "the gateway's ledger shows 999.00" },
      'the gateway charged the amount its ledger shows',
    );
    expect(proposed.kind).toBe('ok');
    // Four eyes: the proposer cannot approve.
    expect(await service.approve({ ...OPERATOR, role: 'approver' }, caseId)).toMatchObject({
      kind: 'refused',
      code: 'CASE_SAME_PERSON',
    });
    expect(await eventsOf('schedule-charge-settled-by-decision')).toEqual([]);

    expect(await service.approve(APPROVER, caseId)).toMatchObject({ kind: 'ok' });
    expect(await eventsOf('schedule-charge-settled-by-decision')).toMatchObject([
      {
        requestId: SUBJECT,
        caseId,
        decision: 'done',
        amount: eur(99_900),
        requestedAmount: eur(999),
        decidedBy: 'alice',
        approvedBy: 'bob',
        gatewayOrderId: ORDER,
      },
    ]);
    expect(await eventsOf('gateway-cycle-charged')).toEqual([]);
    expect((await caseOf())?.status).toBe('closed');
    // Nothing asked of the gateway by the decision: no request in the outbox after it.
    const requests = await orch.dataSource.query<Array<{ n: string }>>(
      `SELECT count(*)::text AS n FROM outbox WHERE topic = 'payments.gateway.requests.v1'`,
    );
    expect(requests[0]?.n).toBe('0');

    // The gateway declines that very charge afterwards: the saga says so, the sweep reopens.
    await orch.runtime.handleGatewayResult(
      statusReply({
        kind: 'accepted',
        gatewayOrderId: ORDER,
        report: { status: 'declined', gatewayOrderId: ORDER },
      }),
      {},
    );
    expect(await eventsOf('schedule-charge-case-reopened')).toMatchObject([
      { requestId: SUBJECT, caseId, answer: 'declined', alert: true },
    ]);
    expect((await service.sweep()).reopened).toBe(1);
    expect((await caseOf())?.status).toBe('reopened');
    expect(await eventsOf('schedule-charge-settled-by-decision')).toHaveLength(1);
  });
});
