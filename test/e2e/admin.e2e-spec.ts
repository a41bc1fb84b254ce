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
import { AdminActionAudited, type CreateScheduleCommand, TOPICS } from '@payments/contracts';
import { createTestDatabase, type TestDatabase } from '@payments/testing';
import { tokenHash } from '../../apps/orchestrator/src/domain/admin-tokens';
import { PaymentStack, SANDBOX_MERCHANT } from '../../scripts/stack/payment-stack';
import { payoutCheck } from '../../scripts/stack/payout-commands';
import { buildApps, REPO_ROOT } from '../../scripts/stack/processes';
import { readMessages } from '../support/kafka';

const exec = promisify(execFile);
const OPERATOR = `op-${randomUUID()}`;
const VIEWER = `view-${randomUUID()}`;

let stack: PaymentStack;
let orchestratorDb: TestDatabase;
let adapterDb: TestDatabase;

beforeAll(async () => {
  await buildApps();
  orchestratorDb = await createTestDatabase('e2e_admin_orchestrator');
  adapterDb = await createTestDatabase('e2e_admin_adapter');
  stack = await PaymentStack.start({
    kafkaBrokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','),
    orchestratorDatabaseUrl: orchestratorDb.url,
    adapterDatabaseUrl: adapterDb.url,
    env: {
      orchestrator: {
        ADMIN_TOKENS: JSON.stringify([
          { name: 'alice', role: 'operator', sha256: tokenHash(OPERATOR) },
          { name: 'bob', role: 'viewer', sha256: tokenHash(VIEWER) },
        ]),
      },
    },
  });
});

afterAll(async () => {
  await stack?.stop();
  await orchestratorDb?.drop();
  await adapterDb?.drop();
});

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

async function admin(
  method: 'GET' | 'POST',
  route: string,
  token: string | undefined,
  body?: unknown,
): Promise<Answer> {
  const response = await fetch(`${stack.urls.orchestrator}${route}`, {
    method,
    headers: {
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

const errorCode = (a: Answer) => (a.body.error as { code?: string } | undefined)?.code;

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
      body: { name: 'bob', role: 'viewer' },
    });
    expect((await admin('GET', '/admin/whoami', OPERATOR)).body).toEqual({
      name: 'alice',
      role: 'operator',
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
    expect(detail.body.actions).toEqual(['refresh-status', 'resolve-unknown']);
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
    return all.map((m) => AdminActionAudited.parse(JSON.parse(m.value?.toString() ?? 'null')));
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

  it('refresh-status reaches the payment (nothing in flight: refused by the saga); an action of another flow is 409 and leaves no audit', async () => {
    const paymentId = await approvedSale(1_234);
    const answer = await admin(
      'POST',
      `/admin/sagas/${paymentId}/actions/refresh-status`,
      OPERATOR,
      {
        reason: 'customer says charged twice',
      },
    );
    expect(answer.status).toBe(202);
    auditCount++;
    const rejected = await stack.events.waitFor(
      paymentId,
      (e) => e.type === 'command-rejected' && e.commandId === answer.body.commandId,
      60_000,
    );
    expect(rejected.event).toMatchObject({ reason: 'NOTHING_TO_REFRESH' });

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
    expect((detail.body.audit as unknown[]).length).toBe(1);
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
