/**
 * The admin API on the four processes, the real broker and PostgreSQL: bearer tokens
 * and roles, search filters and keyset pages, one saga's detail, and each kind of action entering
 * as a command through Kafka that the saga acts on — audited in a row and an event on
 * payments.admin.audit.v1. The CLI's `saga`/`sagas` commands are run against it too.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  type AdminActionAudited,
  AdminAuditEvent,
  type CreateScheduleCommand,
  TOPICS,
} from '@payments/contracts';
import { chargeIds } from '../../apps/orchestrator/src/flows/recurring-schedule/domain';
import { PaymentStack, SANDBOX_MERCHANT } from '../../scripts/stack/payment-stack';
import { Client } from 'pg';
import { oneStepPayout, payoutCheck, transfer } from '../../scripts/stack/payout-commands';
import { REPO_ROOT } from '../../scripts/stack/processes';
import { readMessages } from '../support/kafka';
import { adminTokens, type E2eStack, startE2eStack } from '../support/e2e-stack';

const exec = promisify(execFile);
const OPERATOR = `op-${randomUUID()}`;
/** USD, no 3-D Secure, used by no other test of this file for schedules. */
const GATEWAY_SCHEDULE_ENDPOINT = SANDBOX_MERCHANT.paymentFormPreauthEndpoint;
const VIEWER = `view-${randomUUID()}`;

let e2e: E2eStack;
let stack: PaymentStack;

beforeAll(async () => {
  e2e = await startE2eStack('admin', {
    env: {
      orchestrator: {
        // The clock is moved past the fast polling phase so that only an operator's action can
        // bring a status query within minutes (leftUnknown below).
        TEST_CONTROLS_ENABLED: 'true',
        // Schedules on this endpoint are registered with the gateway, which charges them.
        SCHEDULE_GATEWAY_REGISTRATION_ENDPOINTS: GATEWAY_SCHEDULE_ENDPOINT,
        ADMIN_TOKENS: adminTokens([
          { name: 'alice', role: 'operator', token: OPERATOR },
          { name: 'bob', role: 'viewer', token: VIEWER },
        ]),
      },
    },
  });
  stack = e2e.stack;
});

afterAll(async () => {
  await e2e?.stop();
});

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

const admin = (method: 'GET' | 'POST', route: string, token: string | undefined, body?: unknown) =>
  stack.admin<Record<string, unknown>>(method, route, token, body);

const errorCode = (a: Answer) => (a.body.error as { code?: string } | undefined)?.code;

/** An action the saga's state does not take: 409 before any command, the flow's reason named. */
function refusedInState(a: Answer, reason: string): void {
  expect(a.status).toBe(409);
  expect(errorCode(a)).toBe('ACTION_NOT_ALLOWED_IN_STATE');
  expect((a.body.error as { message: string }).message).toContain(reason);
}

async function approvedSale(amountMinor: number): Promise<string> {
  const sale = stack.sale({ amountMinor, currency: 'USD' });
  await stack.send(sale);
  await stack.events.waitForType(sale.paymentId, ['approved'], 60_000);
  return sale.paymentId;
}

describe('admin API: authentication', () => {
  it('401 without or with an unknown token, 403 for a viewer acting, 200 for a viewer reading', async () => {
    expect((await admin('GET', '/admin/sagas', undefined)).status).toBe(401);
    const unknown = await admin('GET', '/admin/sagas', `x-${randomUUID()}`);
    expect(unknown.status).toBe(401);
    expect(errorCode(unknown)).toBe('UNAUTHENTICATED');
    expect((await admin('GET', '/admin/sagas', VIEWER)).status).toBe(200);
    // Who a token names, for a console to show only what the role may do; 401 like every route.
    expect(await admin('GET', '/admin/whoami', VIEWER)).toEqual({
      status: 200,
      body: { name: 'bob', role: 'viewer', scope: 'all' },
    });
    expect((await admin('GET', '/admin/whoami', OPERATOR)).body).toEqual({
      name: 'alice',
      role: 'operator',
      scope: 'all',
    });
    expect((await admin('GET', '/admin/whoami', `x-${randomUUID()}`)).status).toBe(401);
    const paymentId = await approvedSale(1_111);
    const forbidden = await admin(
      'POST',
      `/admin/sagas/${paymentId}/actions/refresh-status`,
      VIEWER,
      { reason: 'check' },
    );
    expect(forbidden.status).toBe(403);
    expect(errorCode(forbidden)).toBe('FORBIDDEN');
    // Refused before anything was written: no audit.
    const detail = await admin('GET', `/admin/sagas/${paymentId}`, VIEWER);
    expect(detail.body.audit).toEqual([]);
  }, 120_000);
});

describe('admin API: search and detail', () => {
  it('filters by flow, status, currency, amount, endpoint and time; pages by cursor; shows one saga whole', async () => {
    const startedAt = new Date(Date.now() - 1_000).toISOString();
    const amounts = [20_001, 20_002, 20_003];
    const ids: string[] = [];
    for (const amount of amounts) ids.push(await approvedSale(amount));

    const search = (query: string) => admin('GET', `/admin/sagas?${query}`, VIEWER);
    const idsOf = (a: Answer) => (a.body.items as Array<{ id: string }>).map((i) => i.id);
    const mine = await search(
      `flow=card-payment&status=approved&currency=USD&minAmount=20001&maxAmount=20003&from=${encodeURIComponent(startedAt)}&endpoint=${SANDBOX_MERCHANT.plainEndpoint}`,
    );
    expect(mine.status).toBe(200);
    expect([...idsOf(mine)].sort()).toEqual([...ids].sort());
    expect(mine.body.items).toContainEqual(
      expect.objectContaining({
        id: ids[1],
        flow: 'card-payment',
        status: 'approved',
        amount: { minor: 20_002, currency: 'USD' },
        unknownSince: null,
      }),
    );
    expect(idsOf(await search('minAmount=20002&maxAmount=20002&currency=USD'))).toEqual([ids[1]]);
    // The merchant's order id (a sale's client_orderid is its payment id) finds that one saga.
    expect(mine.body.items).toContainEqual(
      expect.objectContaining({ id: ids[2], merchantOrderId: ids[2] }),
    );
    expect(idsOf(await search(`merchantOrderId=${ids[2]}`))).toEqual([ids[2]]);
    expect(idsOf(await search(`merchantOrderId=${randomUUID()}`))).toEqual([]);
    // The sandbox endpoint takes USD only: another currency must find none of them.
    expect(idsOf(await search('minAmount=20001&maxAmount=20003&currency=EUR'))).toEqual([]);
    expect(
      idsOf(await search(`to=${encodeURIComponent(startedAt)}&minAmount=20001&maxAmount=20003`)),
    ).toEqual([]);

    // Keyset pages of one: every saga once, newest first, then no cursor.
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await search(
        `minAmount=20001&maxAmount=20003&currency=USD&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
      );
      seen.push(...idsOf(page));
      cursor = page.body.nextCursor as string | undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual([...ids].reverse());

    const detail = await admin('GET', `/admin/sagas/${ids[0]}`, VIEWER);
    expect(detail.status).toBe(200);
    // An approved sale: charged the whole amount, nothing returned.
    expect(detail.body.money).toEqual({
      currency: 'USD',
      authorized: 20_001,
      captured: 20_001,
      returned: 0,
      remaining: 20_001,
    });
    // Actions by state, for this token: a viewer may take none; a settled sale offers an operator
    // nothing either (nothing in flight to refresh, no outcome unknown).
    expect(detail.body.actions).toEqual([]);
    expect((await admin('GET', `/admin/sagas/${ids[0]}`, OPERATOR)).body.actions).toEqual([]);
    const history = detail.body.history as Array<{ version: number; type: string }>;
    expect(history.map((h) => h.type)).toEqual(
      expect.arrayContaining(['operation-requested', 'approved']),
    );
    expect(history.map((h) => h.version)).toEqual(history.map((_h, i) => i + 1));
    const events = detail.body.events as Array<{ type: string; publishedAt: string | null }>;
    expect(events.map((e) => e.type)).toEqual(history.map((h) => h.type));
    const requests = detail.body.gatewayRequests as Array<{ operation: string; request: object }>;
    expect(requests.map((r) => r.operation)).toContain('sale');
    for (const r of requests) expect(r.request).not.toHaveProperty('sealedCard');

    // Bad input: a clear 400 or 404, nothing else.
    expect((await search('limit=0')).status).toBe(400);
    expect((await search('currency=euro')).status).toBe(400);
    expect((await search('cursor=not-a-cursor')).status).toBe(400);
    expect((await search('colour=blue')).status).toBe(400);
    expect((await admin('GET', `/admin/sagas/${randomUUID()}`, VIEWER)).status).toBe(404);
    expect((await admin('GET', '/admin/sagas/not-a-uuid', VIEWER)).status).toBe(400);
  }, 180_000);

  it('finds an outcome left unknown by its age', async () => {
    const sale = stack.sale({ amountMinor: 31_000, currency: 'USD' });
    await stack.controls.addFault({ clientOrderId: sale.paymentId, outcome: 'unknown' });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['outcome-unknown'], 60_000);
    const old = await admin(
      'GET',
      '/admin/sagas?unknownOlderThanSeconds=0&minAmount=31000&maxAmount=31000',
      VIEWER,
    );
    expect(
      (old.body.items as Array<{ id: string; unknownSince: string }>).map((i) => i.id),
    ).toEqual([sale.paymentId]);
    const hourOld = await admin(
      'GET',
      '/admin/sagas?unknownOlderThanSeconds=3600&minAmount=31000&maxAmount=31000',
      VIEWER,
    );
    expect(hourOld.body.items).toEqual([]);
  }, 120_000);
});

describe('admin API: actions enter as commands through Kafka, audited', () => {
  /** Actions audited by the tests of this block so far (the topic holds at least these). */
  let auditCount = 0;
  async function auditEvents(): Promise<AdminActionAudited[]> {
    const all = await readMessages(TOPICS.adminAudit, auditCount);
    // The topic also carries cases' steps (case-step-audited), of other suites' stacks too.
    return all
      .map((m) => AdminAuditEvent.parse(JSON.parse(m.value?.toString() ?? 'null')))
      .filter((e): e is AdminActionAudited => e.type === 'admin-action-audited');
  }

  it('approve: a registered payout is paid out, approved by the operator, with its reason', async () => {
    const check = payoutCheck({ amountMinor: 4_000 });
    await stack.sendRaw(check);
    await stack.events.waitForPayout(check.payoutId, ['payout-registered'], 60_000);
    const waiting = await admin('GET', `/admin/sagas?flow=payout&status=registered`, VIEWER);
    const listed = (waiting.body.items as Array<{ id: string; approvalDeadline: string }>).find(
      (i) => i.id === check.payoutId,
    );
    expect(Date.parse(listed?.approvalDeadline ?? '')).toBeGreaterThan(Date.now());
    const answer = await admin('POST', `/admin/sagas/${check.payoutId}/actions/approve`, OPERATOR, {
      reason: 'seller verified by phone',
    });
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ commandType: 'approve-payout' });
    auditCount++;
    const approved = await stack.events.waitForPayout(check.payoutId, ['payout-approved'], 60_000);
    expect(approved.event).toMatchObject({ commandId: answer.body.commandId, approvedBy: 'alice' });
    await stack.events.waitForPayout(check.payoutId, ['paid-out'], 60_000);

    const detail = await admin('GET', `/admin/sagas/${check.payoutId}`, VIEWER);
    expect(detail.body.audit).toEqual([
      expect.objectContaining({
        actor: 'alice',
        role: 'operator',
        action: 'approve',
        reason: 'seller verified by phone',
        commandId: answer.body.commandId,
        commandType: 'approve-payout',
      }),
    ]);
    const audited = (await auditEvents()).find((e) => e.commandId === answer.body.commandId);
    expect(audited).toMatchObject({
      actor: 'alice',
      role: 'operator',
      action: 'approve',
      sagaId: check.payoutId,
      flow: 'payout',
      auditId: answer.body.auditId,
    });
  }, 180_000);

  it('refresh-status with nothing in flight is refused by the state (409) before any command; an action of another flow is 409; neither leaves an audit', async () => {
    const paymentId = await approvedSale(1_234);
    const answer = await admin(
      'POST',
      `/admin/sagas/${paymentId}/actions/refresh-status`,
      OPERATOR,
      {
        reason: 'customer says charged twice',
      },
    );
    expect(answer.status).toBe(409);
    expect(errorCode(answer)).toBe('ACTION_NOT_ALLOWED_IN_STATE');
    expect((answer.body.error as { message: string }).message).toContain('NOTHING_TO_REFRESH');

    const wrongFlow = await admin('POST', `/admin/sagas/${paymentId}/actions/approve`, OPERATOR, {
      reason: 'x',
    });
    expect(wrongFlow.status).toBe(409);
    expect(errorCode(wrongFlow)).toBe('ACTION_NOT_APPLICABLE');
    expect(
      (await admin('POST', `/admin/sagas/${paymentId}/actions/explode`, OPERATOR, { reason: 'x' }))
        .status,
    ).toBe(400);
    expect(
      (await admin('POST', `/admin/sagas/${paymentId}/actions/refresh-status`, OPERATOR, {}))
        .status,
    ).toBe(400);
    expect(
      (
        await admin('POST', `/admin/sagas/${randomUUID()}/actions/refresh-status`, OPERATOR, {
          reason: 'x',
        })
      ).status,
    ).toBe(404);
    const detail = await admin('GET', `/admin/sagas/${paymentId}`, VIEWER);
    expect(detail.body.audit).toEqual([]);
    // No command was produced: the saga saw none.
    const types = stack.events.eventsOf(paymentId).map((r) => r.event.type);
    expect(types).not.toContain('command-rejected');
  }, 120_000);

  it('pause, resume and cancel a schedule', async () => {
    const sale = stack.sale({ amountMinor: 1_000, currency: 'USD' });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['approved'], 60_000);
    const base = () => ({
      commandId: randomUUID(),
      merchant: { endpointId: SANDBOX_MERCHANT.plainEndpoint },
      occurredAt: new Date().toISOString(),
    });
    await stack.sendRaw({ type: 'create-card-ref', ...base(), paymentId: sale.paymentId });
    const created = await stack.events.waitForType(sale.paymentId, ['card-ref-created'], 60_000);
    const refId = (created.event as { cardRef: { refId: string } }).cardRef.refId;
    const scheduleId = randomUUID();
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const schedule: CreateScheduleCommand = {
      type: 'create-schedule',
      ...base(),
      scheduleId,
      cardRef: { refId },
      amount: { minor: 990, currency: 'USD' },
      description: 'Plan admin',
      rule: {
        period: 'month',
        interval: 1,
        startDate: tomorrow,
        timeOfDay: '12:00',
        timeZone: 'UTC',
        end: { kind: 'never' },
      },
    };
    await stack.sendRaw(schedule);
    await stack.events.waitForSchedule(scheduleId, (e) => e.type === 'schedule-created', 60_000);
    for (const [action, event] of [
      ['pause', 'schedule-paused'],
      ['resume', 'schedule-resumed'],
      ['cancel', 'schedule-cancelled'],
    ] as const) {
      const answer = await admin('POST', `/admin/sagas/${scheduleId}/actions/${action}`, OPERATOR, {
        reason: `operator ${action}`,
      });
      expect(answer.status).toBe(202);
      auditCount++;
      const seen = await stack.events.waitForSchedule(scheduleId, (e) => e.type === event, 60_000);
      expect(seen.commandId).toBe(answer.body.commandId);
    }
    const detail = await admin('GET', `/admin/sagas/${scheduleId}`, VIEWER);
    expect((detail.body.audit as Array<{ action: string }>).map((a) => a.action)).toEqual([
      'pause',
      'resume',
      'cancel',
    ]);
    expect(detail.body.saga).toMatchObject({ flow: 'recurring-schedule', status: 'cancelled' });
  }, 180_000);

  it('the CLI shows a saga and searches through the admin API', async () => {
    const paymentId = await approvedSale(5_555);
    const cli = (...args: string[]) =>
      exec(process.execPath, [path.join(REPO_ROOT, 'bin/payments.js'), ...args], {
        env: {
          ...process.env,
          PAYMENTS_ADMIN_URL: stack.urls.orchestrator,
          PAYMENTS_ADMIN_TOKEN: VIEWER,
        },
        timeout: 60_000,
      });
    const shown = await cli('saga', paymentId);
    expect(shown.stdout).toContain(`"id":"${paymentId}"`);
    expect(shown.stdout).toMatch(/history \(\d+\)/);
    const json = JSON.parse((await cli('saga', paymentId, '--json')).stdout) as {
      saga: { id: string };
    };
    expect(json.saga.id).toBe(paymentId);
    const found = JSON.parse(
      (await cli('sagas', '--currency', 'USD', '--json', '--limit', '200')).stdout,
    ) as { items: Array<{ id: string }> };
    expect(found.items.map((i) => i.id)).toContain(paymentId);
    await expect(cli('saga', randomUUID())).rejects.toMatchObject({ code: 2 });
  }, 120_000);
});

/** The orchestrator's next status poll of a saga (its timer of `kind`), or undefined without one. */
async function nextPoll(sagaId: string, kind = 'status-poll'): Promise<Date | undefined> {
  const client = new Client({ connectionString: e2e.orchestratorDb.url });
  await client.connect();
  try {
    const result = await client.query<{ due_at: Date }>(
      `SELECT due_at FROM timers WHERE saga_id::text = $1 AND kind = $2`,
      [sagaId, kind],
    );
    return result.rows[0]?.due_at;
  } finally {
    await client.end();
  }
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/**
 * Leaves a saga's gateway operation really unknown, and quiet: the gateway processes it but its
 * reply is lost, its callbacks are dropped and every status query fails while the returned rule is
 * live. Then the orchestrator's clock is moved past the fast polling phase (every 3-5 s for five
 * minutes, then every 5-10 minutes) and the poll that comes due fails: from here on, with the
 * status rule removed, nothing but an operator's action asks the gateway within five minutes.
 */
async function leftUnknown(options: {
  readonly sagaId: string;
  /** The sandbox's client_orderid of the operation (the saga id unless the gateway chose one). */
  readonly clientOrderId?: string;
  /** The sandbox operation whose reply is lost; undefined: none (the operation is the gateway's own). */
  readonly operation?: string;
  readonly start: () => Promise<void>;
  readonly unknown: () => Promise<unknown>;
  /** The saga's poll timer of this operation, from what `unknown` found (default status-poll). */
  readonly pollKind?: (found: unknown) => string;
  /**
   * The sandbox operation that asks about it again (default STATUS; a card reference has no
   * status and is asked again by sending the same request).
   */
  readonly reask?: string;
}): Promise<{ id: string }> {
  const clientOrderId = options.clientOrderId ?? options.sagaId;
  if (options.operation !== undefined) {
    await stack.controls.addFault({
      clientOrderId,
      operation: options.operation,
      failAfter: 'drop',
      times: 1,
    });
    await stack.controls.addFault({ clientOrderId, callbacks: 'drop' });
  }
  // `times` only to count the status queries that reach the sandbox (`remaining`).
  const noStatus = await stack.controls.addFault({
    clientOrderId,
    operation: options.reask ?? 'STATUS',
    failBefore: 503,
    times: 1_000_000,
  });
  await options.start();
  const found = await options.unknown();
  const pollKind = options.pollKind?.(found);
  await stack.advanceOrchestratorClock(6 * 60);
  // The poll that came due with the jump has run and set the next one minutes away…
  await until('the slow poll cadence', async () => {
    const due = await nextPoll(options.sagaId, pollKind);
    return due !== undefined && due.getTime() > Date.now() + 6 * 60_000;
  });
  // …and its status query reached the sandbox (and failed): no status query is on its way.
  const hits = async () =>
    (await stack.controls.faults()).find((f) => f.id === noStatus.id)?.remaining ?? -1;
  let seen = await hits();
  await until('the status queries to stop', async () => {
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const now = await hits();
    const stable = now === seen;
    seen = now;
    return stable;
  });
  return noStatus;
}

describe('admin API: an outcome left unknown is resolved by asking the gateway, on every flow', () => {
  it('resolve-unknown on a one-step payout whose reply was lost: a status query at once, paid out once on the answer (ledger)', async () => {
    const payout = oneStepPayout({ amountMinor: 6_100 });
    const noStatus = await leftUnknown({
      sagaId: payout.payoutId,
      operation: 'PAYOUT',
      start: () => stack.sendRaw(payout),
      unknown: () => stack.events.waitForPayout(payout.payoutId, ['payout-outcome-unknown']),
    });
    expect(await stack.controls.ledger(payout.payoutId)).toMatchObject({
      entries: [expect.objectContaining({ movement: 'paid-out', amountMinor: 6_100 })],
    });
    await stack.controls.removeFault(noStatus.id);
    const answer = await admin(
      'POST',
      `/admin/sagas/${payout.payoutId}/actions/resolve-unknown`,
      OPERATOR,
      { reason: 'payee says nothing arrived' },
    );
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ commandType: 'refresh-payout-status' });
    const paid = await stack.events.waitForPayout(
      payout.payoutId,
      ['paid-out', 'payout-declined', 'payout-failed', 'payout-command-rejected'],
      60_000,
    );
    expect(paid.event).toMatchObject({ type: 'paid-out', amount: { minor: 6_100 } });
    // Settled long before the next poll could have asked: the action's query did it.
    expect((await nextPoll(payout.payoutId)) ?? null).toBeNull();
    const types = stack.events.payoutEventsOf(payout.payoutId).map((r) => r.event.type);
    expect(types.filter((t) => t === 'paid-out')).toHaveLength(1);
    expect(types).not.toContain('payout-command-rejected');
    const ledger = await stack.controls.ledger(payout.payoutId);
    expect(ledger.entries.map((e) => [e.movement, e.amountMinor])).toEqual([['paid-out', 6_100]]);
    const detail = await admin('GET', `/admin/sagas/${payout.payoutId}`, VIEWER);
    expect(detail.body.saga).toMatchObject({ flow: 'payout', status: 'paid' });
    expect(detail.body.audit).toEqual([
      expect.objectContaining({
        action: 'resolve-unknown',
        commandType: 'refresh-payout-status',
        commandId: answer.body.commandId,
      }),
    ]);
  }, 240_000);

  it("refresh-status on a two-step payout whose payout-pay reply was lost after the operator's approval: paid out once on the answer (ledger)", async () => {
    const check = payoutCheck({ amountMinor: 5_200 });
    await stack.sendRaw(check);
    await stack.events.waitForPayout(check.payoutId, ['payout-registered'], 60_000);
    const noStatus = await leftUnknown({
      sagaId: check.payoutId,
      operation: 'PAYOUT_V4_PAY',
      start: async () => {
        const approval = await admin(
          'POST',
          `/admin/sagas/${check.payoutId}/actions/approve`,
          OPERATOR,
          { reason: 'checked' },
        );
        expect(approval.status).toBe(202);
      },
      unknown: () => stack.events.waitForPayout(check.payoutId, ['payout-outcome-unknown']),
    });
    await stack.controls.removeFault(noStatus.id);
    const answer = await admin(
      'POST',
      `/admin/sagas/${check.payoutId}/actions/refresh-status`,
      OPERATOR,
      { reason: 'did it leave?' },
    );
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ commandType: 'refresh-payout-status' });
    const paid = await stack.events.waitForPayout(
      check.payoutId,
      ['paid-out', 'payout-declined', 'payout-failed', 'payout-command-rejected'],
      60_000,
    );
    expect(paid.event).toMatchObject({ type: 'paid-out', amount: { minor: 5_200 } });
    expect((await nextPoll(check.payoutId)) ?? null).toBeNull();
    const ledger = await stack.controls.ledger(check.payoutId);
    expect(
      ledger.entries.filter((e) => e.movement === 'paid-out').map((e) => e.amountMinor),
    ).toEqual([5_200]);
  }, 240_000);

  it('refresh-status on a transfer whose reply was lost: the answer settles it, transferred once (ledger)', async () => {
    const command = transfer({ amountMinor: 2_700 });
    const noStatus = await leftUnknown({
      sagaId: command.transferId,
      operation: 'TRANSFER_V4',
      start: () => stack.sendRaw(command),
      unknown: () => stack.events.waitForPayout(command.transferId, ['transfer-outcome-unknown']),
    });
    await stack.controls.removeFault(noStatus.id);
    const answer = await admin(
      'POST',
      `/admin/sagas/${command.transferId}/actions/refresh-status`,
      OPERATOR,
      { reason: 'sender asks' },
    );
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ commandType: 'refresh-transfer-status' });
    const done = await stack.events.waitForPayout(
      command.transferId,
      ['transferred', 'transfer-declined', 'transfer-failed', 'transfer-command-rejected'],
      60_000,
    );
    expect(done.event).toMatchObject({ type: 'transferred', amount: { minor: 2_700 } });
    expect((await nextPoll(command.transferId)) ?? null).toBeNull();
    const ledger = await stack.controls.ledger(command.transferId);
    expect(ledger.entries.map((e) => [e.movement, e.amountMinor])).toEqual([
      ['transferred', 2_700],
    ]);
  }, 240_000);

  it("refresh-status on a payment whose card reference's creation was lost: the pending re-ask of that very request is made at once, the gateway's reply makes the reference", async () => {
    const paymentId = await approvedSale(1_310);
    const create = {
      type: 'create-card-ref',
      commandId: randomUUID(),
      merchant: { endpointId: SANDBOX_MERCHANT.plainEndpoint },
      occurredAt: new Date().toISOString(),
      paymentId,
    };
    const noAnswer = await leftUnknown({
      sagaId: paymentId,
      operation: 'CARDREF',
      reask: 'CARDREF',
      start: () => stack.sendRaw(create),
      unknown: () => stack.events.waitForType(paymentId, ['card-reference-unknown'], 120_000),
      pollKind: () => 'gateway-resend',
    });
    const requested = stack.events
      .eventsOf(paymentId)
      .find((r) => r.event.type === 'card-ref-requested');
    const requestId = (requested?.event as { requestId?: string } | undefined)?.requestId;
    expect(requestId).toBeDefined();
    const reaskDue = await nextPoll(paymentId, 'gateway-resend');
    expect(reaskDue?.getTime()).toBeGreaterThan(Date.now() + 6 * 60_000);
    await stack.controls.removeFault(noAnswer.id);
    const answer = await admin(
      'POST',
      `/admin/sagas/${paymentId}/actions/refresh-status`,
      OPERATOR,
      { reason: 'merchant needs the reference for the subscription' },
    );
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ commandType: 'refresh-status' });
    const settled = await stack.events.waitFor(
      paymentId,
      (e) =>
        e.type === 'card-ref-created' ||
        e.type === 'card-reference-failed' ||
        (e.type === 'command-rejected' && e.commandId === answer.body.commandId),
      60_000,
    );
    // The reply to that very request, long before its next re-ask was due.
    expect(settled.event).toMatchObject({ type: 'card-ref-created', requestId });
    expect(Date.now()).toBeLessThan(reaskDue?.getTime() ?? 0);
    expect((await nextPoll(paymentId, 'gateway-resend')) ?? null).toBeNull();
    const types = stack.events.distinctEventsOf(paymentId).map((e) => e.type);
    expect(types.filter((t) => t === 'card-ref-created')).toHaveLength(1);
    const detail = await admin('GET', `/admin/sagas/${paymentId}`, VIEWER);
    expect(detail.body.audit).toEqual([
      expect.objectContaining({
        action: 'refresh-status',
        commandType: 'refresh-status',
        commandId: answer.body.commandId,
      }),
    ]);
  }, 300_000);

  it('reject: a registered payout is rejected through the API, nothing is paid, a later approval is refused; a viewer may not reject', async () => {
    const check = payoutCheck({ amountMinor: 4_400 });
    await stack.sendRaw(check);
    await stack.events.waitForPayout(check.payoutId, ['payout-registered'], 60_000);
    const route = `/admin/sagas/${check.payoutId}/actions/reject`;
    const forbidden = await admin('POST', route, VIEWER, { reason: 'not mine to decide' });
    expect(forbidden.status).toBe(403);
    expect(errorCode(forbidden)).toBe('FORBIDDEN');
    const answer = await admin('POST', route, OPERATOR, { reason: 'payee failed screening' });
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ commandType: 'reject-payout' });
    const rejected = await stack.events.waitForPayout(check.payoutId, ['payout-rejected'], 60_000);
    expect(rejected.event).toMatchObject({
      commandId: answer.body.commandId,
      rejectedBy: 'alice',
      reason: 'payee failed screening',
    });
    const approve = await admin(
      'POST',
      `/admin/sagas/${check.payoutId}/actions/approve`,
      OPERATOR,
      {
        reason: 'changed my mind',
      },
    );
    // Refused by the rejected payout's state before any command: nothing reaches the saga.
    refusedInState(approve, 'PAYOUT_REJECTED');
    // The check moves nothing; no payout-pay was ever sent.
    const ledger = await stack.controls.ledger(check.payoutId);
    expect(ledger.entries.filter((e) => e.movement === 'paid-out')).toEqual([]);
    const detail = await admin('GET', `/admin/sagas/${check.payoutId}`, VIEWER);
    expect(detail.body.saga).toMatchObject({ status: 'rejected' });
    // Neither the viewer's refusal nor the refused approval left an audit: the reject only.
    expect((detail.body.audit as Array<{ action: string }>).map((a) => a.action)).toEqual([
      'reject',
    ]);
    expect(stack.events.payoutEventsOf(check.payoutId).map((r) => r.event.type)).not.toContain(
      'payout-command-rejected',
    );
  }, 180_000);
  it("resolve-unknown on a gateway-registered schedule: its lost registration and then a charge whose status was failing are each settled by the gateway's answer (ledger); pause and cancel are refused meanwhile", async () => {
    const scheduleBase = () => ({
      commandId: randomUUID(),
      merchant: { endpointId: GATEWAY_SCHEDULE_ENDPOINT },
      occurredAt: new Date().toISOString(),
    });
    const sale = stack.sale({
      cvv: '123',
      amountMinor: 1_000,
      currency: 'USD',
      endpointId: GATEWAY_SCHEDULE_ENDPOINT,
    });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['approved'], 60_000);
    await stack.sendRaw({ type: 'create-card-ref', ...scheduleBase(), paymentId: sale.paymentId });
    const created = await stack.events.waitForType(sale.paymentId, ['card-ref-created'], 60_000);
    const refId = (created.event as { cardRef: { refId: string } }).cardRef.refId;
    const scheduleId = randomUUID();
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    const schedule: CreateScheduleCommand = {
      type: 'create-schedule',
      ...scheduleBase(),
      scheduleId,
      cardRef: { refId },
      amount: { minor: 1_350, currency: 'USD' },
      description: 'Plan at the gateway, admin',
      rule: {
        period: 'day',
        interval: 1,
        startDate: tomorrow,
        timeOfDay: '00:00',
        timeZone: 'UTC',
        end: { kind: 'count', count: 1 },
      },
    };
    const scheduleEvent = (type: string) =>
      stack.events.waitForSchedule(scheduleId, (e) => e.type === type, 60_000);
    const act = async (action: string, reason: string) => {
      const answer = await admin('POST', `/admin/sagas/${scheduleId}/actions/${action}`, OPERATOR, {
        reason,
      });
      expect(answer.status).toBe(202);
      return answer.body.commandId as string;
    };

    // The registration's reply is lost, and its status queries fail.
    const noRegistrationStatus = await leftUnknown({
      sagaId: scheduleId,
      operation: 'CREATE_RP_V4',
      start: () => stack.sendRaw(schedule),
      unknown: () => scheduleEvent('schedule-registration-unknown'),
      pollKind: () => 'registration-status',
    });
    // Stuck: the gateway offers no pause or cancel of a recurring payment, so neither is faked.
    // Refused by the schedule's state (its flow's rule) before any command.
    for (const action of ['pause', 'cancel']) {
      const refused = await admin(
        'POST',
        `/admin/sagas/${scheduleId}/actions/${action}`,
        OPERATOR,
        {
          reason: `stuck schedule: ${action}`,
        },
      );
      refusedInState(refused, 'NOT_SUPPORTED_BY_GATEWAY');
    }
    await stack.controls.removeFault(noRegistrationStatus.id);
    const resolve = await act('resolve-unknown', 'was it registered?');
    const registered = await stack.events.waitForSchedule(
      scheduleId,
      (e) =>
        e.type === 'schedule-registered' ||
        e.type === 'schedule-registration-failed' ||
        (e.type === 'command-rejected' && e.commandId === resolve),
      60_000,
    );
    expect(registered).toMatchObject({ type: 'schedule-registered', resolvedBy: 'status' });
    expect((await nextPoll(scheduleId, 'registration-status')) ?? null).toBeNull();
    const plans = (await (
      await fetch(
        `${stack.urls['gateway-sandbox']}/_sandbox/recurring?login=${SANDBOX_MERCHANT.login}`,
      )
    ).json()) as Array<Record<string, string | number>>;
    // Registered once (never sent again), nothing charged yet.
    expect(plans.filter((p) => p['merchant-order-id'] === scheduleId)).toEqual([
      expect.objectContaining({ charges: 0 }),
    ]);

    // The gateway charges the first cycle and calls back; every status query about it fails.
    const chargeOrder = `${scheduleId}-1`;
    const noChargeStatus = await leftUnknown({
      sagaId: scheduleId,
      clientOrderId: chargeOrder,
      start: () => stack.controls.advanceClock(86_400 + 60),
      unknown: () => scheduleEvent('gateway-charge-reported'),
      pollKind: (reported) =>
        `charge-status:${(reported as { gatewayOrderId: string }).gatewayOrderId}`,
    });
    expect(stack.events.scheduleEventsOf(scheduleId).map((e) => e.type)).not.toContain(
      'gateway-cycle-charged',
    );
    await stack.controls.removeFault(noChargeStatus.id);
    await act('refresh-status', 'did the gateway charge?');
    const charged = await scheduleEvent('gateway-cycle-charged');
    expect(charged).toMatchObject({
      cycle: 0,
      clientOrderId: chargeOrder,
      amount: { minor: 1_350, currency: 'USD' },
    });
    const ledger = await stack.controls.ledger(chargeOrder);
    expect(ledger.entries.map((e) => [e.movement, e.amountMinor])).toEqual([['charged', 1_350]]);
    expect((await stack.controls.ledger(scheduleId)).entries).toEqual([]);
    const detail = await admin('GET', `/admin/sagas/${scheduleId}`, VIEWER);
    expect((detail.body.audit as Array<{ action: string }>).map((a) => a.action)).toEqual([
      'resolve-unknown',
      'refresh-status',
    ]);
  }, 300_000);
  it("a schedule we charge, stuck with its cycle's rebill unknown: pause refused, cancel taken, refresh points to the rebill; refresh-status on the rebill settles it and the cancelled schedule records the charge (ledger)", async () => {
    const scheduleBase = () => ({
      commandId: randomUUID(),
      merchant: { endpointId: SANDBOX_MERCHANT.plainEndpoint },
      occurredAt: new Date().toISOString(),
    });
    const sale = stack.sale({ cvv: '123', amountMinor: 1_000, currency: 'USD' });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['approved'], 60_000);
    await stack.sendRaw({ type: 'create-card-ref', ...scheduleBase(), paymentId: sale.paymentId });
    const created = await stack.events.waitForType(sale.paymentId, ['card-ref-created'], 60_000);
    const refId = (created.event as { cardRef: { refId: string } }).cardRef.refId;
    const scheduleId = randomUUID();
    const orchestratorNow = () => Date.now() + stack.orchestratorClockAdvanced * 1000;
    const startDate = new Date(orchestratorNow() + 86_400_000).toISOString().slice(0, 10);
    await stack.sendRaw({
      type: 'create-schedule',
      ...scheduleBase(),
      scheduleId,
      cardRef: { refId },
      amount: { minor: 1_450, currency: 'USD' },
      description: 'Plan, stuck',
      rule: {
        period: 'month',
        interval: 1,
        startDate,
        timeOfDay: '12:00',
        timeZone: 'UTC',
        end: { kind: 'never' },
      },
    } satisfies CreateScheduleCommand);
    await stack.events.waitForSchedule(scheduleId, (e) => e.type === 'schedule-created', 60_000);
    // The first cycle's rebill: its reply lost, its callbacks dropped, its status failing.
    const { paymentId } = chargeIds(scheduleId, 0, 1);
    const noStatus = await leftUnknown({
      sagaId: paymentId,
      operation: 'REBILL',
      start: () =>
        stack.advanceOrchestratorClock(
          Math.ceil((Date.parse(`${startDate}T12:00:00.000Z`) - orchestratorNow()) / 1000) + 60,
        ),
      unknown: () => stack.events.waitForType(paymentId, ['outcome-unknown'], 60_000),
    });
    const act = async (sagaId: string, action: string) => {
      const answer = await admin('POST', `/admin/sagas/${sagaId}/actions/${action}`, OPERATOR, {
        reason: `stuck schedule: ${action}`,
      });
      expect(answer.status).toBe(202);
      return answer.body.commandId as string;
    };
    const answerTo = (commandId: string) =>
      stack.events.waitForSchedule(scheduleId, (e) => e.commandId === commandId, 60_000);
    const refusal = (action: string) =>
      admin('POST', `/admin/sagas/${scheduleId}/actions/${action}`, OPERATOR, {
        reason: `stuck schedule: ${action}`,
      });
    refusedInState(await refusal('pause'), 'OPERATION_IN_PROGRESS');
    // Nothing of the schedule's own is at the gateway: the operator is sent to the rebill.
    const refresh = await refusal('refresh-status');
    refusedInState(refresh, 'NOTHING_TO_REFRESH');
    refusedInState(refresh, paymentId);
    expect(await answerTo(await act(scheduleId, 'cancel'))).toMatchObject({
      type: 'schedule-cancelled',
    });
    refusedInState(await refusal('resume'), 'INVALID_STATE');
    await stack.controls.removeFault(noStatus.id);
    await act(paymentId, 'resolve-unknown');
    const final = await stack.events.waitForType(
      paymentId,
      ['approved', 'declined', 'failed'],
      60_000,
    );
    expect(final.event).toMatchObject({ type: 'approved' });
    // The charge in flight when the schedule was cancelled is still recorded, once.
    const charged = await stack.events.waitForSchedule(
      scheduleId,
      (e) => e.type === 'cycle-charged' || e.type === 'cycle-charge-declined',
      60_000,
    );
    expect(charged).toMatchObject({ type: 'cycle-charged', paymentId, amount: { minor: 1_450 } });
    const ledger = await stack.controls.ledger(paymentId);
    expect(ledger.entries.map((e) => [e.movement, e.amountMinor])).toEqual([['charged', 1_450]]);
    const detail = await admin('GET', `/admin/sagas/${scheduleId}`, VIEWER);
    expect(detail.body.saga).toMatchObject({ status: 'cancelled' });
  }, 300_000);
});
