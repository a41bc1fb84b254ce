/**
 * The reconciliation service against the migrated schema (PostgreSQL alone, the clock in the
 * test's hand): which sagas a run checks, the status requests it writes to the outbox (paced per
 * endpoint), how answers become verdicts, mismatch events and one completion, and that redelivered
 * commands and answers change nothing.
 */
import { randomUUID } from 'node:crypto';
import { CaseStepAudited, type GatewayResult, type GatewayStatusReport } from '@payments/contracts';
import type { OrchestratorConfig } from '../../config';
import { OutboxWriter } from '../../runtime/outbox/outbox.writer';
import { IdGenerator } from '../../runtime/clock';
import { ReconciliationService } from './reconciliation.service';
import { LOOKUP_AFTER_MS } from './reconciliation-rows';
import { orchestratorFixture } from '../../../test/kits/orchestrator.fixture';

const config = {
  policy: { unknownAlertSeconds: 3600 },
  reconciliation: {
    workerEnabled: false,
    intervalSeconds: 0,
    settleSeconds: 0,
    ratePerSecond: 2,
    maxAttempts: 3,
    answerTimeoutSeconds: 30,
    tickMs: 1000,
  },
} as unknown as OrchestratorConfig;

interface OutboxMessage {
  topic: string;
  payload: Record<string, unknown>;
}

describe('reconciliation service (real PostgreSQL)', () => {
  const orch = orchestratorFixture({
    name: 'reconciliation',
    poolSize: 2,
    start: '2026-03-01T12:00:00.000Z',
  });
  const { clock } = orch;
  let service: ReconciliationService;

  beforeAll(() => {
    service = new ReconciliationService(
      orch.database,
      new OutboxWriter(),
      clock,
      new IdGenerator(),
      config,
    );
  });

  const created = new Date('2026-03-01T10:30:00.000Z');
  const window = { from: new Date('2026-03-01T10:00:00Z'), to: new Date('2026-03-01T11:00:00Z') };

  async function payment(status: string, fields: object = {}, at = created): Promise<string> {
    const id = randomUUID();
    const state = {
      status,
      version: 3,
      paymentId: id,
      kind: 'sale',
      merchant: { endpointId: '1113' },
      currency: 'USD',
      clientOrderId: id,
      gatewayOrderId: `gw-${id.slice(0, 8)}`,
      authorized: status === 'approved' ? 2500 : 0,
      captured: 0,
      returned: 0,
      holdReleased: false,
      holdExpired: false,
      ...fields,
    };
    await orch.dataSource.query(
      `INSERT INTO sagas (id, flow, endpoint_id, kind, status, state, version, client_order_id, created_at)
       VALUES ($1, 'card-payment', '1113', 'sale', $2, $3, 3, $5, $4)`,
      [id, status, state, at, id],
    );
    return id;
  }

  const outbox = async (topicSuffix: string): Promise<OutboxMessage[]> =>
    orch.dataSource.query<OutboxMessage[]>(
      `SELECT topic, payload FROM outbox WHERE topic LIKE $1 ORDER BY sequence`,
      [`%${topicSuffix}`],
    );

  const answer = (
    request: Record<string, unknown>,
    result: GatewayResult['result'],
  ): GatewayResult => ({
    requestId: request.requestId as string,
    paymentId: request.paymentId as string,
    operation: 'status',
    subjectRequestId: request.subjectRequestId as string,
    attempt: request.attempt as number,
    result,
    completedAt: clock.now().toISOString(),
  });

  const USD = (minor: number) => ({ minor, currency: 'USD' });
  /** The gateway's accepted status reply carrying `report`. */
  const accepted = (report: GatewayStatusReport) => ({ kind: 'accepted' as const, report });
  const startRun = (runId: string, over = window) =>
    service.start({ runId, trigger: 'on-demand', requestedBy: 'test', ...over });
  /** The gateway requests written to the outbox, from the `from`-th on. */
  const requestsFrom = async (from = 0) =>
    (await outbox('gateway.requests.v1')).map((m) => m.payload).slice(from);
  const reconciliationEvents = async () =>
    (await outbox('reconciliation.v1')).map((m) => m.payload);
  const emptyTables = () =>
    orch.dataSource.query(`DELETE FROM saga_history; DELETE FROM sagas; DELETE FROM outbox`);
  /** Our side of a check of the latest operation (no history with serials): a sale. */
  const latestSale = (status: string, amount: { minor: number; currency: string }) => ({
    status,
    operation: 'sale',
    amount,
    basis: 'latest-operation',
  });
  /** The events of one settled request of the gateway: requested, accepted (`serial`), settled. */
  const settledRequest = (
    requestId: string,
    operation: 'sale' | 'return',
    minor: number,
    serialNumber: string,
    settledAt?: Date,
  ) => [
    { type: 'operation-requested', requestId, operation, amount: USD(minor) },
    { type: 'accepted-by-gateway', requestId, operation, serialNumber },
    {
      type: operation === 'sale' ? 'approved' : 'returned',
      requestId,
      amount: USD(minor),
      ...(settledAt === undefined ? {} : { when: settledAt }),
    },
  ];

  it('checks the settled sagas of the window, paced per endpoint; answers become verdicts, mismatches and one completion', async () => {
    const stillApproved = await payment('approved');
    const declinedNow = await payment('approved');
    const declined = await payment('declined');
    await payment('processing', {
      inFlight: { operation: 'sale', stage: 'processing', amount: { minor: 1, currency: 'USD' } },
    });
    await payment('approved', {}, new Date('2026-03-01T11:30:00Z')); // outside the window

    const runId = randomUUID();
    const run = { runId, trigger: 'on-demand' as const, requestedBy: 'test', ...window };
    expect(await service.start(run)).toBe(3);
    expect(await service.start(run)).toBeUndefined(); // a redelivered command starts nothing

    // Two per endpoint per tick (RECONCILIATION_RATE_PER_SECOND 2, one tick a second).
    expect(await service.dispatch()).toBe(2);
    expect(await service.dispatch()).toBe(1);
    const requests = await requestsFrom();
    expect(requests).toHaveLength(3);
    expect(requests.map((r) => r.operation)).toEqual(['status', 'status', 'status']);
    const requestOf = (id: string) => {
      const found = requests.find((r) => r.paymentId === id);
      if (found === undefined) throw new Error(`no status request for ${id}`);
      return found;
    };
    expect(requestOf(stillApproved)).toMatchObject({
      clientOrderId: stillApproved,
      gatewayOrderId: `gw-${stillApproved.slice(0, 8)}`,
      subjectOperation: 'sale',
      attempt: 1,
    });
    // The check's ids are its own: they are in no saga's gateway requests.
    expect(await service.owned(requests.map((r) => r.requestId as string))).toEqual(
      new Set(requests.map((r) => r.requestId)),
    );

    const report = (status: 'approved' | 'declined') =>
      accepted({ status, transactionType: 'sale', amount: USD(2500) });
    await service.record([
      answer(requestOf(stillApproved), report('approved')),
      answer(requestOf(declinedNow), report('declined')),
    ]);
    expect(await outbox('reconciliation.v1')).toHaveLength(1); // the mismatch; not complete yet
    const last = answer(
      requestOf(declined),
      accepted({ status: 'declined', transactionType: 'sale' }),
    );
    await service.record([last]);
    await service.record([last]); // a redelivered answer changes nothing
    expect(await outbox('reconciliation.v1')).toHaveLength(1); // the lookup is still out

    // The sale the gateway confirmed charged is looked up by its client order id alone (once the
    // adapter would let the saga's next status query go); the gateway answers about our own
    // order: nothing else is under that id.
    clock.at = new Date(clock.at.getTime() + LOOKUP_AFTER_MS);
    expect(await service.dispatch()).toBe(1);
    const lookups = await requestsFrom(3);
    expect(lookups).toHaveLength(1);
    const [lookup] = lookups;
    if (lookup === undefined) throw new Error('no lookup');
    expect(lookup).toMatchObject({
      operation: 'status',
      paymentId: stillApproved,
      clientOrderId: stillApproved,
      attempt: 1,
    });
    expect(lookup).not.toHaveProperty('gatewayOrderId');
    expect(await service.owned([lookup.requestId as string])).toEqual(new Set([lookup.requestId]));
    await service.record([
      answer(
        lookup,
        accepted({
          status: 'approved',
          transactionType: 'sale',
          gatewayOrderId: `gw-${stillApproved.slice(0, 8)}`,
        }),
      ),
    ]);

    const events = await reconciliationEvents();
    expect(events).toEqual([
      expect.objectContaining({
        type: 'reconciliation-mismatch',
        runId,
        sagaId: declinedNow,
        kind: 'reported-charged-but-not',
        // No history with serials here: the check of the latest operation, and it says so.
        ours: latestSale('approved', USD(2500)),
        gateway: {
          status: 'declined',
          transactionType: 'sale',
          amount: USD(2500),
        },
      }),
      expect.objectContaining({
        type: 'reconciliation-completed',
        runId,
        trigger: 'on-demand',
        checked: 3,
        matched: 2,
        mismatched: 1,
        byKind: { 'reported-charged-but-not': 1 },
      }),
    ]);
    expect(await service.dispatch()).toBe(0);
  });

  it('paid twice: the lookup by client order id names another order, approved — one saga, one finding', async () => {
    await emptyTables();
    const twice = await payment('approved');
    const once = await payment('approved');
    const runId = randomUUID();
    expect(await startRun(runId)).toBe(2);
    expect(await service.dispatch()).toBe(2);
    const orders = await requestsFrom();
    const approved = (id: string) =>
      accepted({
        status: 'approved' as const,
        transactionType: 'sale',
        amount: USD(2500),
        gatewayOrderId: id,
      });
    for (const request of orders) {
      await service.record([
        answer(request, approved(`gw-${(request.paymentId as string).slice(0, 8)}`)),
      ]);
    }
    expect(await outbox('reconciliation.v1')).toHaveLength(0);
    // The lookups are due once the adapter would let each saga's next status query go.
    expect(await service.dispatch()).toBe(0);
    clock.at = new Date(clock.at.getTime() + LOOKUP_AFTER_MS);
    expect(await service.dispatch()).toBe(2);
    const lookups = await requestsFrom(2);
    const lookupOf = (id: string) => {
      const found = lookups.find((r) => r.paymentId === id);
      if (found === undefined) throw new Error(`no lookup for ${id}`);
      return found;
    };
    // Still processing at first: asked again later, nothing concluded.
    await service.record([
      answer(
        lookupOf(twice),
        accepted({ status: 'processing', transactionType: 'sale', gatewayOrderId: 'gw-second' }),
      ),
      answer(lookupOf(once), approved(`gw-${once.slice(0, 8)}`)),
    ]);
    expect(await outbox('reconciliation.v1')).toHaveLength(0);
    clock.at = new Date(clock.at.getTime() + 60_000);
    expect(await service.dispatch()).toBe(1);
    const again = await requestsFrom(4);
    expect(again).toEqual([expect.objectContaining({ paymentId: twice, attempt: 2 })]);
    const [second] = again;
    if (second === undefined) throw new Error('no second attempt');
    await service.record([answer(second, approved('gw-second'))]);
    await service.record([answer(second, approved('gw-second'))]); // redelivered: nothing more

    const events = await reconciliationEvents();
    expect(events).toEqual([
      expect.objectContaining({
        type: 'reconciliation-mismatch',
        sagaId: twice,
        kind: 'paid-twice',
        // No history with serials here: the check of the latest operation, and it says so.
        ours: latestSale('approved', USD(2500)),
        gateway: {
          status: 'approved',
          transactionType: 'sale',
          amount: USD(2500),
          gatewayOrderId: `gw-${twice.slice(0, 8)}`,
        },
        otherOrder: {
          status: 'approved',
          transactionType: 'sale',
          amount: USD(2500),
          gatewayOrderId: 'gw-second',
        },
      }),
      expect.objectContaining({
        type: 'reconciliation-completed',
        runId,
        checked: 2,
        matched: 1,
        mismatched: 1,
        byKind: { 'paid-twice': 1 },
      }),
    ]);
    const verdicts = await orch.dataSource.query<
      Array<{ saga_id: string; subject: string; verdict: string }>
    >(
      `SELECT saga_id, subject, verdict FROM reconciliation_checks WHERE run_id = $1
        ORDER BY saga_id, subject`,
      [runId],
    );
    expect(verdicts).toEqual(
      expect.arrayContaining([
        { saga_id: twice, subject: 'order', verdict: 'paid-twice' },
        { saga_id: twice, subject: 'client-order-id', verdict: 'paid-twice' },
        { saga_id: once, subject: 'order', verdict: 'match' },
        { saga_id: once, subject: 'client-order-id', verdict: 'match' },
      ]),
    );
    expect(verdicts).toHaveLength(4);
    // Two gateway orders for one request: a case, the finding its evidence; none for the other.
    const cases = await orch.dataSource.query<
      Array<{ saga_id: string; concern: string; record: { evidence: Array<{ summary: string }> } }>
    >(`SELECT saga_id, concern, record FROM cases WHERE saga_id = ANY($1::uuid[])`, [
      [twice, once],
    ]);
    expect(cases.map((c) => [c.saga_id, c.concern])).toEqual([[twice, 'reconciliation-mismatch']]);
    expect(cases[0]?.record.evidence.map((e) => e.summary)).toEqual([
      expect.stringContaining('other order: approved sale 2500 USD order gw-second'),
    ]);
  });

  it('held back by our adapter: asked again at retryAt, the attempt not spent, an answer to the older attempt ignored; out of attempts: unresolved', async () => {
    await emptyTables();
    const id = await payment('approved');
    const runId = randomUUID();
    expect(await startRun(runId)).toBe(1);
    expect(await service.dispatch()).toBe(1);
    const [first] = await requestsFrom();
    if (first === undefined) throw new Error('no request');
    const retryAt = new Date(clock.now().getTime() + 10_000);
    await service.record([
      answer(first, {
        kind: 'not-sent',
        reason: 'status budget spent',
        retryAt: retryAt.toISOString(),
      }),
    ]);
    expect(await service.dispatch()).toBe(0); // not before retryAt
    clock.at = new Date(retryAt.getTime() + 1);
    expect(await service.dispatch()).toBe(1);
    // A late answer to attempt 1 is ignored: attempt 2 is out.
    await service.record([
      answer(first, accepted({ status: 'declined', transactionType: 'sale' })),
    ]);
    expect(await outbox('reconciliation.v1')).toHaveLength(0);

    // No answer at all: after each answer timeout it is asked again, then given up after three
    // attempts that could reach the gateway (the held one is not spent: four sent in all).
    clock.at = new Date(clock.at.getTime() + 31_000);
    expect(await service.dispatch()).toBe(1); // attempt 3
    clock.at = new Date(clock.at.getTime() + 31_000);
    expect(await service.dispatch()).toBe(1); // attempt 4
    expect(await requestsFrom()).toHaveLength(4);
    expect(await outbox('reconciliation.v1')).toHaveLength(0);
    clock.at = new Date(clock.at.getTime() + 31_000);
    expect(await service.dispatch()).toBe(1); // out of attempts: concluded unresolved
    const events = await reconciliationEvents();
    expect(events.map((e) => [e.type, e.kind ?? e.mismatched])).toEqual([
      ['reconciliation-mismatch', 'unresolved'],
      ['reconciliation-completed', 1],
    ]);
    expect(events[0]).toMatchObject({ sagaId: id });
    expect(events[0]).not.toHaveProperty('gateway');
    // Unresolved says nothing about the gateway: no case of its own.
    expect(await orch.dataSource.query(`SELECT id FROM cases WHERE saga_id = $1`, [id])).toEqual(
      [],
    );
  });

  it('a mismatch the saga cannot settle opens one case with the finding; a second run adds its finding to that case, every step audited', async () => {
    await emptyTables();
    const id = await payment('approved');
    const declinedAnswer = accepted({
      status: 'declined',
      transactionType: 'sale',
      amount: USD(2500),
    });
    for (const _run of [1, 2]) {
      const before = (await requestsFrom()).length;
      expect(await startRun(randomUUID())).toBe(1);
      expect(await service.dispatch()).toBe(1);
      const [request] = await requestsFrom(before);
      if (request === undefined) throw new Error('no status request');
      await service.record([answer(request, declinedAnswer)]);
      await service.record([answer(request, declinedAnswer)]); // redelivered: nothing more
      clock.at = new Date(clock.at.getTime() + 1_000);
    }
    const cases = await orch.dataSource.query<
      Array<{ concern: string; status: string; record: Record<string, unknown> }>
    >(`SELECT concern, status, record FROM cases WHERE saga_id = $1`, [id]);
    expect(cases).toHaveLength(1);
    const [opened] = cases;
    expect(opened).toMatchObject({ concern: 'reconciliation-mismatch', status: 'open' });
    const evidence = opened?.record.evidence as Array<{ source: string; summary: string }>;
    expect(evidence).toHaveLength(2);
    for (const item of evidence) {
      expect(item.source).toBe('reconciliation');
      expect(item.summary).toContain('reported-charged-but-not');
      expect(item.summary).toContain('gateway: declined sale 2500 USD');
    }
    // Each step: a row of admin_audit and its event on the admin audit topic, by the system.
    const rows = await orch.dataSource.query<
      Array<{ action: string; actor: string; role: string; case_id: string; command_id: null }>
    >(
      `SELECT action, actor, role, case_id, command_id FROM admin_audit WHERE saga_id = $1 ORDER BY (detail->>'index')::int`,
      [id],
    );
    expect(rows.map((r) => [r.action, r.actor, r.role, r.command_id])).toEqual([
      ['case-opened', 'system', 'system', null],
      ['case-evidence-added', 'system', 'system', null],
    ]);
    const audited = (await outbox('admin.audit.v1'))
      .map((m) => m.payload)
      .filter((e) => e.sagaId === id);
    expect(audited).toEqual([
      expect.objectContaining({
        type: 'case-step-audited',
        step: 'opened',
        actor: 'system',
        concern: 'reconciliation-mismatch',
        caseId: rows[0]?.case_id,
        evidenceSeen: 1,
      }),
      expect.objectContaining({
        type: 'case-step-audited',
        step: 'evidence-added',
        evidenceSeen: 2,
      }),
    ]);
    for (const event of audited) expect(CaseStepAudited.safeParse(event).success).toBe(true);
  });

  it('a window without settled sagas completes at once with zero checks', async () => {
    const runId = randomUUID();
    const empty = { from: new Date('2020-01-01T00:00:00Z'), to: new Date('2020-01-01T01:00:00Z') };
    expect(await startRun(runId, empty)).toBe(0);
    const [completed] = (await outbox('reconciliation.v1'))
      .map((m) => m.payload)
      .filter((e) => e.runId === runId);
    expect(completed).toMatchObject({ type: 'reconciliation-completed', checked: 0, matched: 0 });
  });

  /** Appends events to a saga's history, versions from 1, each at `at` unless it names `when`. */
  async function history(
    sagaId: string,
    events: ReadonlyArray<Record<string, unknown> & { when?: Date }>,
    at = created,
  ) {
    for (const [i, { when, ...event }] of events.entries()) {
      await orch.dataSource.query(
        `INSERT INTO saga_history (saga_id, version, event_id, event_type, event, command_id, occurred_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [sagaId, i + 1, randomUUID(), event.type, event, randomUUID(), when ?? at],
      );
    }
  }

  it('operation by operation: each settled request asked by its serial; a return the gateway declined is found on that return', async () => {
    await emptyTables();
    const [sale, return1, return2, transferRequest] = [
      randomUUID(),
      randomUUID(),
      randomUUID(),
      randomUUID(),
    ];
    const card = await payment('partially-returned', {
      authorized: 10_000,
      captured: 10_000,
      returned: 5_000,
    });
    await history(card, [
      ...settledRequest(sale, 'sale', 10_000, 'sn-1'),
      ...settledRequest(return1, 'return', 3_000, 'sn-2'),
      ...settledRequest(return2, 'return', 2_000, 'sn-3'),
    ]);
    const transfer = randomUUID();
    await orch.dataSource.query(
      `INSERT INTO sagas (id, flow, endpoint_id, kind, status, state, version, client_order_id, created_at)
       VALUES ($1, 'transfer', '1113', 'transfer', 'transferred', $2, 3, $4, $3)`,
      [
        transfer,
        {
          status: 'transferred',
          version: 3,
          transferId: transfer,
          merchant: { endpointId: '1113' },
          amount: USD(5_000),
          clientOrderId: transfer,
          gatewayOrderId: 'gw-transfer',
        },
        created,
        transfer,
      ],
    );
    await history(transfer, [
      {
        type: 'transfer-requested',
        requestId: transferRequest,
        operation: 'transfer',
        amount: USD(5_000),
      },
      {
        type: 'transfer-accepted-by-gateway',
        requestId: transferRequest,
        operation: 'transfer',
        serialNumber: 'sn-t',
      },
      {
        type: 'transferred',
        requestId: transferRequest,
        operation: 'transfer',
        amount: USD(5_000),
      },
    ]);

    const runId = randomUUID();
    expect(await startRun(runId)).toBe(4);
    expect(await service.dispatch()).toBe(2);
    expect(await service.dispatch()).toBe(2);
    const requests = await requestsFrom();
    // Each asks about exactly one request of the order (by-request-sn).
    expect(requests.map((r) => r.subjectSerial).sort()).toEqual(['sn-1', 'sn-2', 'sn-3', 'sn-t']);
    const bySerial = (serial: string) => {
      const found = requests.find((r) => r.subjectSerial === serial);
      if (found === undefined) throw new Error(`no status request for ${serial}`);
      return found;
    };
    expect(bySerial('sn-2')).toMatchObject({
      paymentId: card,
      clientOrderId: card,
      gatewayOrderId: `gw-${card.slice(0, 8)}`,
      subjectOperation: 'return',
    });
    expect(bySerial('sn-t')).toMatchObject({
      paymentId: transfer,
      gatewayOrderId: 'gw-transfer',
      subjectOperation: 'transfer',
    });
    // The status amount is the order's initial amount, whichever request the reply is about.
    const reply = (serial: string, status: 'approved' | 'declined', type: string, minor: number) =>
      answer(
        bySerial(serial),
        accepted({ status, transactionType: type, requestSerial: serial, amount: USD(minor) }),
      );
    await service.record([
      reply('sn-1', 'approved', 'sale', 10_000),
      reply('sn-2', 'declined', 'reversal', 10_000),
      reply('sn-3', 'approved', 'reversal', 10_000),
      reply('sn-t', 'approved', 'transfer', 5_000),
    ]);
    // The sale and the transfer, confirmed, are looked up by client order id: only ours there.
    clock.at = new Date(clock.at.getTime() + LOOKUP_AFTER_MS);
    expect(await service.dispatch()).toBe(2);
    const lookups = await requestsFrom(4);
    expect(lookups.map((l) => l.paymentId).sort()).toEqual([card, transfer].sort());
    for (const lookup of lookups) expect(lookup).not.toHaveProperty('subjectSerial');
    await service.record(
      lookups.map((lookup) =>
        answer(
          lookup,
          accepted({
            status: 'approved',
            gatewayOrderId: lookup.paymentId === card ? `gw-${card.slice(0, 8)}` : 'gw-transfer',
          }),
        ),
      ),
    );

    const events = await reconciliationEvents();
    expect(events).toEqual([
      expect.objectContaining({
        type: 'reconciliation-mismatch',
        sagaId: card,
        kind: 'reported-charged-but-not',
        ours: {
          status: 'partially-returned',
          operation: 'return',
          basis: 'request',
          requestId: return1,
          serial: 'sn-2',
        },
        gateway: {
          status: 'declined',
          transactionType: 'reversal',
          amount: USD(10_000),
        },
      }),
      expect.objectContaining({
        type: 'reconciliation-completed',
        runId,
        checked: 4,
        matched: 3,
        mismatched: 1,
        byKind: { 'reported-charged-but-not': 1 },
      }),
    ]);
  });

  it("a window's operations of sagas created before it: a return days after its sale, a registered schedule's charge", async () => {
    await emptyTables();
    const daysBefore = new Date('2026-02-20T09:00:00Z');
    const [sale, refund] = [randomUUID(), randomUUID()];
    const card = await payment(
      'partially-returned',
      { authorized: 10_000, captured: 10_000, returned: 3_000 },
      daysBefore,
    );
    await history(
      card,
      [
        ...settledRequest(sale, 'sale', 10_000, 'sn-1'),
        ...settledRequest(refund, 'return', 3_000, 'sn-2', created),
      ],
      daysBefore,
    );
    const schedule = randomUUID();
    await orch.dataSource.query(
      `INSERT INTO sagas (id, flow, endpoint_id, kind, status, state, version, created_at)
       VALUES ($1, 'recurring-schedule', '1113', NULL, 'registered', $2, 3, $3)`,
      [
        schedule,
        {
          status: 'registered',
          version: 3,
          terms: {
            scheduleId: schedule,
            amount: USD(990),
            // Its one cycle is the charge recorded below: no charge left to expect.
            rule: {
              period: 'month',
              interval: 1,
              startDate: '2026-02-21',
              timeOfDay: '00:00',
              timeZone: 'UTC',
              end: { kind: 'count', count: 1 },
            },
          },
          charges: [
            {
              gatewayOrderId: 'gw-charge-1',
              clientOrderId: `${schedule}-1`,
              cycle: 0,
              outcome: 'charged',
            },
          ],
        },
        daysBefore,
      ],
    );
    await history(schedule, [
      {
        type: 'gateway-cycle-charged',
        cycle: 0,
        gatewayOrderId: 'gw-charge-1',
        clientOrderId: `${schedule}-1`,
        amount: USD(990),
      },
    ]);

    const runId = randomUUID();
    expect(await startRun(runId)).toBe(2);
    expect(await service.dispatch()).toBe(2);
    const requests = await requestsFrom();
    const [ofReturn] = requests.filter((r) => r.paymentId === card);
    const [ofCharge] = requests.filter((r) => r.paymentId === schedule);
    // The return alone (the sale was checked in its own window), by its serial.
    expect(ofReturn).toMatchObject({ subjectSerial: 'sn-2', subjectOperation: 'return' });
    // The charge by its own order, under its own client order id.
    expect(ofCharge).toMatchObject({
      clientOrderId: `${schedule}-1`,
      gatewayOrderId: 'gw-charge-1',
      subjectOperation: 'sale',
    });
    expect(ofCharge).not.toHaveProperty('subjectSerial');
    if (ofReturn === undefined || ofCharge === undefined) throw new Error('requests missing');
    await service.record([
      answer(
        ofReturn,
        accepted({
          status: 'approved',
          transactionType: 'reversal',
          requestSerial: 'sn-2',
          amount: USD(10_000),
        }),
      ),
      // The gateway says it charged 19.90 where the schedule recorded 9.90.
      answer(
        ofCharge,
        accepted({ status: 'approved', transactionType: 'sale', amount: USD(1_990) }),
      ),
    ]);
    // The charge's amount differs (no lookup then); a return asks for none: the run is complete.
    const events = await reconciliationEvents();
    expect(events).toEqual([
      expect.objectContaining({
        type: 'reconciliation-mismatch',
        sagaId: schedule,
        flow: 'recurring-schedule',
        kind: 'amount-differs',
        ours: latestSale('registered', USD(990)),
      }),
      expect.objectContaining({
        type: 'reconciliation-completed',
        checked: 2,
        matched: 1,
        byKind: { 'amount-differs': 1 },
      }),
    ]);
  });
});
