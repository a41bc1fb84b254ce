/**
 * Access to the admin API on the four processes, the real broker, PostgreSQL and the sandbox:
 * tokens limited to a merchant (another merchant's saga does not exist for them), tokens created,
 * listed and revoked through the CLI (a revoked one refused at once), four eyes for a payout
 * above the threshold (not paid after one approval — the sandbox's ledger shows no payout — paid
 * once after a second one by another person with the approver role; the same person twice is
 * refused), and actions by state (a paid payout refuses approve and reject with a clear code).
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { tokenHash } from '../../apps/orchestrator/src/domain/admin/admin-tokens';
import { PaymentStack, SANDBOX_MERCHANT } from '../../scripts/stack/payment-stack';
import { payoutCheck } from '../../scripts/stack/payout-commands';
import { REPO_ROOT } from '../../scripts/stack/processes';
import { adminTokens, type E2eStack, startE2eStack } from '../support/e2e-stack';

const exec = promisify(execFile);
/** The configured token: an approver of every merchant (creates the others). */
const ROOT = `root-${randomUUID()}`;
/** Merchant A: payouts and sales of the tests; merchant B: another endpoint of the sandbox. */
const MERCHANT_A = SANDBOX_MERCHANT.plainEndpoint;
const MERCHANT_B = SANDBOX_MERCHANT.paymentFormPreauthEndpoint;
/** Payouts above this need two approvals. */
const FOUR_EYES_ABOVE = 5_000;

let e2e: E2eStack;
let stack: PaymentStack;

beforeAll(async () => {
  e2e = await startE2eStack('admin_access', {
    env: {
      orchestrator: {
        ADMIN_TOKENS: adminTokens([{ name: 'root', role: 'approver', scope: 'all', token: ROOT }]),
        PAYOUT_FOUR_EYES_ABOVE_MINOR: String(FOUR_EYES_ABOVE),
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

const admin = (method: 'GET' | 'POST', route: string, token: string, body?: unknown) =>
  stack.admin<Record<string, unknown>>(method, route, token, body);

const errorCode = (a: Answer) => (a.body.error as { code?: string } | undefined)?.code;

/** `payments <args>` against the stack's admin API with `token`. */
function cli(token: string, ...args: string[]) {
  return exec(process.execPath, [path.join(REPO_ROOT, 'bin/payments.js'), ...args], {
    env: {
      ...process.env,
      PAYMENTS_ADMIN_URL: stack.urls.orchestrator,
      PAYMENTS_ADMIN_TOKEN: token,
    },
    timeout: 60_000,
  });
}

/** A stored token made through the admin API by the configured approver. */
async function storedToken(name: string, role: string, scope: unknown): Promise<string> {
  const created = await admin('POST', '/admin/tokens', ROOT, { name, role, scope });
  expect(created.status).toBe(201);
  return created.body.token as string;
}

async function registeredPayout(amountMinor: number): Promise<string> {
  const check = payoutCheck({ amountMinor });
  await stack.sendRaw(check);
  await stack.events.waitForPayout(check.payoutId, ['payout-registered'], 60_000);
  return check.payoutId;
}

const paidOut = async (payoutId: string) =>
  (await stack.controls.ledger(payoutId)).entries.filter((e) => e.movement === 'paid-out');

const approve = (payoutId: string, token: string, reason = 'checked the payee') =>
  admin('POST', `/admin/sagas/${payoutId}/actions/approve`, token, { reason });

describe('admin access: a token limited to merchant A', () => {
  it("neither sees nor acts on merchant B's sagas (404, never listed), and sees A's", async () => {
    const scopedA = await storedToken('ann', 'operator', { endpoints: [MERCHANT_A] });
    const saleB = stack.sale({ amountMinor: 2_100, currency: 'USD', endpointId: MERCHANT_B });
    await stack.send(saleB);
    await stack.events.waitFor(saleB.paymentId, () => true, 60_000);
    const payoutA = await registeredPayout(1_200);

    // The root token sees both.
    expect((await admin('GET', `/admin/sagas/${saleB.paymentId}`, ROOT)).status).toBe(200);
    expect((await admin('GET', `/admin/whoami`, scopedA)).body).toEqual({
      name: 'ann',
      role: 'operator',
      scope: { endpoints: [MERCHANT_A] },
    });

    const foreign = await admin('GET', `/admin/sagas/${saleB.paymentId}`, scopedA);
    expect(foreign.status).toBe(404);
    expect(errorCode(foreign)).toBe('SAGA_NOT_FOUND');
    const act = await admin(
      'POST',
      `/admin/sagas/${saleB.paymentId}/actions/refresh-status`,
      scopedA,
      { reason: 'curious' },
    );
    expect(act.status).toBe(404);
    const ids = (a: Answer) => (a.body.items as Array<{ id: string }>).map((i) => i.id);
    const everything = await admin('GET', '/admin/sagas?limit=200', scopedA);
    expect(ids(everything)).not.toContain(saleB.paymentId);
    expect(ids(everything)).toContain(payoutA);
    const asked = await admin('GET', `/admin/sagas?endpoint=${MERCHANT_B}`, scopedA);
    expect(asked.body.items).toEqual([]);
    // Its own merchant's saga: visible, with the actions its state offers.
    const own = await admin('GET', `/admin/sagas/${payoutA}`, scopedA);
    expect(own.status).toBe(200);
    expect(own.body.actions).toEqual(['approve', 'reject']);
    // What spans every merchant is not for it.
    expect((await admin('GET', '/admin/dead-letters', scopedA)).status).toBe(403);
    expect((await admin('GET', '/admin/reconciliation/runs', scopedA)).status).toBe(403);
    // Nothing was audited on B's saga.
    const detailB = await admin('GET', `/admin/sagas/${saleB.paymentId}`, ROOT);
    expect(detailB.body.audit).toEqual([]);
  }, 180_000);
});

describe('admin access: four eyes for a payout above the threshold', () => {
  it('one approval records it and pays nothing; the same person again is refused; a second approver pays it once', async () => {
    const alice = await storedToken('alice', 'operator', 'all');
    const carl = await storedToken('carl', 'operator', 'all');
    const bob = await storedToken('bob', 'approver', { endpoints: [MERCHANT_A] });
    const payoutId = await registeredPayout(FOUR_EYES_ABOVE + 1_000);

    const first = await approve(payoutId, alice);
    expect(first.status).toBe(202);
    const recorded = await stack.events.waitForPayout(
      payoutId,
      ['payout-approval-recorded'],
      60_000,
    );
    expect(recorded.event).toMatchObject({
      commandId: first.body.commandId,
      approvedBy: 'alice',
      approverRole: 'operator',
      fourEyesAboveMinor: FOUR_EYES_ABOVE,
    });
    // Recorded, not paid: still registered, and the gateway paid nothing.
    const waiting = await admin('GET', `/admin/sagas/${payoutId}`, alice);
    expect(waiting.body.saga).toMatchObject({ status: 'registered' });
    expect(waiting.body.actions).toEqual(['reject']);
    expect(await paidOut(payoutId)).toEqual([]);

    const again = await approve(payoutId, alice, 'approving once more');
    expect(again.status).toBe(409);
    expect(errorCode(again)).toBe('PAYOUT_SAME_APPROVER');
    const noRole = await approve(payoutId, carl);
    expect(noRole.status).toBe(409);
    expect(errorCode(noRole)).toBe('PAYOUT_APPROVER_ROLE_REQUIRED');
    expect(await paidOut(payoutId)).toEqual([]);

    expect((await admin('GET', `/admin/sagas/${payoutId}`, bob)).body.actions).toEqual([
      'approve',
      'reject',
    ]);
    const second = await approve(payoutId, bob, 'second pair of eyes');
    expect(second.status).toBe(202);
    const approved = await stack.events.waitForPayout(payoutId, ['payout-approved'], 60_000);
    expect(approved.event).toMatchObject({
      commandId: second.body.commandId,
      approvedBy: 'bob',
      firstApprovedBy: 'alice',
    });
    await stack.events.waitForPayout(payoutId, ['paid-out'], 60_000);
    expect((await paidOut(payoutId)).map((e) => e.amountMinor)).toEqual([FOUR_EYES_ABOVE + 1_000]);

    // A paid payout offers neither approve nor reject, and refuses both before any command.
    const paid = await admin('GET', `/admin/sagas/${payoutId}`, bob);
    expect(paid.body.saga).toMatchObject({ status: 'paid' });
    expect(paid.body.actions).toEqual([]);
    for (const action of ['approve', 'reject']) {
      const late = await admin('POST', `/admin/sagas/${payoutId}/actions/${action}`, bob, {
        reason: 'late',
      });
      expect(late.status).toBe(409);
      expect(errorCode(late)).toBe('ACTION_NOT_ALLOWED_IN_STATE');
    }
    // Audited: the two approvals that were sent, nothing of the refused ones.
    expect(
      (paid.body.audit as Array<{ actor: string; role: string; action: string }>).map((a) => [
        a.actor,
        a.role,
        a.action,
      ]),
    ).toEqual([
      ['alice', 'operator', 'approve'],
      ['bob', 'approver', 'approve'],
    ]);
    const types = stack.events.payoutEventsOf(payoutId).map((r) => r.event.type);
    expect(types.filter((t) => t === 'paid-out')).toHaveLength(1);
    expect(types).not.toContain('payout-command-rejected');
  }, 240_000);

  it('a reject by an operator after the first approval ends it: nothing paid', async () => {
    const alice = await storedToken('alice-2', 'approver', 'all');
    const dora = await storedToken('dora', 'operator', 'all');
    const payoutId = await registeredPayout(FOUR_EYES_ABOVE + 1);
    expect((await approve(payoutId, alice)).status).toBe(202);
    await stack.events.waitForPayout(payoutId, ['payout-approval-recorded'], 60_000);
    const rejected = await admin('POST', `/admin/sagas/${payoutId}/actions/reject`, dora, {
      reason: 'payee failed screening',
    });
    expect(rejected.status).toBe(202);
    await stack.events.waitForPayout(payoutId, ['payout-rejected'], 60_000);
    expect(await paidOut(payoutId)).toEqual([]);
    expect((await admin('GET', `/admin/sagas/${payoutId}`, alice)).body.actions).toEqual([]);
  }, 180_000);
});

describe('admin access: tokens through the CLI', () => {
  it('created (printed once), listed without the secret, revoked: refused at once', async () => {
    const created = await cli(
      ROOT,
      'tokens',
      'create',
      '--name',
      'eve',
      '--role',
      'viewer',
      '--endpoint',
      MERCHANT_A,
    );
    const token = created.stdout.trim();
    expect(token).toMatch(/^pat_[A-Za-z0-9_-]{43}$/);
    expect((await admin('GET', '/admin/whoami', token)).body).toEqual({
      name: 'eve',
      role: 'viewer',
      scope: { endpoints: [MERCHANT_A] },
    });
    const listed = JSON.parse((await cli(ROOT, 'tokens', 'list', '--json')).stdout) as Array<{
      id: string;
      name: string;
      revokedAt: string | null;
    }>;
    const eve = listed.find((t) => t.name === 'eve');
    expect(eve).toMatchObject({ role: 'viewer', createdBy: 'root', revokedAt: null });
    expect(JSON.stringify(listed)).not.toContain(token);
    expect(JSON.stringify(listed)).not.toContain(tokenHash(token));
    // Only an approver of every merchant manages tokens.
    await expect(cli(token, 'tokens', 'list')).rejects.toMatchObject({ code: 2 });

    await cli(ROOT, 'tokens', 'revoke', eve?.id ?? '');
    const refused = await admin('GET', '/admin/sagas', token);
    expect(refused.status).toBe(401);
    expect(errorCode(refused)).toBe('UNAUTHENTICATED');
    const after = JSON.parse((await cli(ROOT, 'tokens', 'list', '--json')).stdout) as Array<{
      id: string;
      revokedAt: string | null;
      revokedBy: string | null;
    }>;
    expect(after.find((t) => t.id === eve?.id)).toMatchObject({
      revokedAt: expect.any(String),
      revokedBy: 'root',
    });
  }, 180_000);
});
