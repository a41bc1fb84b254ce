/**
 * The operator console (apps/console) in a real browser on the real stack: the gateway sandbox,
 * gateway-adapter, callback-ingest and the orchestrator with its admin API as separate processes
 * on the real broker and PostgreSQL, the console as one more process in front of the admin API
 * (the stack's `console` option),
 * and headless Chromium (playwright-core) as the people using it. One browser context per person
 * (each has their own session cookie); a failing step leaves a screenshot in
 * .run/browser-screenshots/.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Client } from 'pg';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { CreateScheduleCommand } from '@payments/contracts';
import { CHROMIUM_ARGS, CHROMIUM_PATH, SCREENSHOT_DIR } from '../../scripts/stack/payer-browser';
import {
  PaymentStack,
  SANDBOX_MERCHANT,
  TEST_CARD_NUMBER,
} from '../../scripts/stack/payment-stack';
import { payoutCheck } from '../../scripts/stack/payout-commands';
import { sleep } from '../../scripts/stack/processes';
import { adminTokens, type E2eStack, startE2eStack } from '../support/e2e-stack';

jest.setTimeout(300_000);

const OPERATOR = `op-${randomUUID()}`;
const VIEWER = `view-${randomUUID()}`;
/** A second person with the approver role (cases: four eyes). */
const APPROVER = `appr-${randomUUID()}`;
/** A viewer who sees one merchant only (the header says so; the Endpoint select offers it). */
const MERCHANT_VIEWER = `merch-${randomUUID()}`;
const ENDPOINT = SANDBOX_MERCHANT.plainEndpoint;

/**
 * The day-close test closes the sales' day of ENDPOINT: its zone is chosen now so that its
 * midnight comes 30 to 90 minutes from the start (a fixed-offset Etc/GMT zone), and the test moves
 * the orchestrator's clock past it — by less than two hours, not a whole day.
 */
const DAY_ZONE = (() => {
  const now = Date.now();
  for (let hours = -12; hours <= 14; hours += 1) {
    const offsetMs = hours * 3_600_000;
    const local = now + offsetMs;
    const untilMidnight = 86_400_000 - (((local % 86_400_000) + 86_400_000) % 86_400_000);
    if (untilMidnight >= 30 * 60_000 && untilMidnight < 90 * 60_000) {
      // Etc/GMT signs are inverted (POSIX): Etc/GMT-5 is UTC+5.
      const name = hours === 0 ? 'Etc/GMT' : `Etc/GMT${hours > 0 ? '-' : '+'}${Math.abs(hours)}`;
      return { name, offsetMs };
    }
  }
  throw new Error('no whole-hour zone has its midnight 30 to 90 minutes away');
})();

let e2e: E2eStack;
let stack: PaymentStack;
let consoleUrl: string;
let browser: Browser;
/** Every Content-Security-Policy violation any page reported, by console message or event. */
const violations: string[] = [];

beforeAll(async () => {
  e2e = await startE2eStack('console', {
    env: {
      orchestrator: {
        // Its clock is moved past the fast status-poll phase in the unknown-outcome test.
        TEST_CONTROLS_ENABLED: 'true',
        // Scheduled reconciliation of 20-second windows, each once it ended 10 s ago (the
        // reconciliation view's test plants a mismatch before its window is checked).
        RECONCILIATION_INTERVAL_SECONDS: '20',
        RECONCILIATION_SETTLE_SECONDS: '10',
        RECONCILIATION_TICK_MS: '250',
        ADMIN_TOKENS: adminTokens([
          { name: 'fiona-finance', role: 'operator', token: OPERATOR },
          { name: 'sam-support', role: 'viewer', token: VIEWER },
          { name: 'adam-approver', role: 'approver', token: APPROVER },
          {
            name: 'mia-merchant',
            role: 'viewer',
            scope: { endpoints: [ENDPOINT] },
            token: MERCHANT_VIEWER,
          },
        ]),
        // Cases are opened within a second of their alert.
        CASE_SWEEP_MS: '300',
        MERCHANT_TIME_ZONES: JSON.stringify({ [ENDPOINT]: DAY_ZONE.name }),
      },
    },
    console: true,
  });
  stack = e2e.stack;
  consoleUrl = stack.console?.url ?? '';
  browser = await chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [...CHROMIUM_ARGS],
    timeout: 60_000,
  });
});

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await e2e?.stop();
});

/** A person's own browser context (own cookies), every page watched for CSP violations. */
async function person<T>(name: string, use: (page: Page, ctx: BrowserContext) => Promise<T>) {
  const ctx = await browser.newContext();
  ctx.setDefaultTimeout(20_000);
  // Browser-side code as text: this project compiles without the DOM library.
  await ctx.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) => {
      console.error('CSP violation event: ' + e.violatedDirective + ' ' + e.blockedURI);
    });`,
  });
  const page = await ctx.newPage();
  page.on('console', (m) => {
    if (/Content Security Policy|CSP violation/i.test(m.text())) violations.push(m.text());
  });
  try {
    return await use(page, ctx);
  } catch (error) {
    mkdirSync(SCREENSHOT_DIR, { recursive: true });
    await page
      .screenshot({ path: path.join(SCREENSHOT_DIR, `console-${name}.png`), fullPage: true })
      .catch(() => undefined);
    throw error;
  } finally {
    await ctx.close().catch(() => undefined);
  }
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.goto(`${consoleUrl}/sign-in`);
  await page.locator('input[name="token"]').fill(token);
  await page.locator('#signInForm button[type="submit"]').click();
  await page.waitForURL(`${consoleUrl}/sagas`);
}

async function approvedSale(amountMinor: number): Promise<string> {
  const sale = stack.sale({ amountMinor, currency: 'USD' });
  await stack.send(sale);
  await stack.events.waitForType(sale.paymentId, ['approved'], 60_000);
  return sale.paymentId;
}

/** What the page holds that no policy-abiding page may: inline scripts, inline styles. */
async function inlineCode(page: Page): Promise<number> {
  return page.evaluate<number>(
    `document.querySelectorAll('script:not([src]), style, [style], [onclick], [onload]').length`,
  );
}

/**
 * axe-core (the accessibility engine): from AXE_CORE_PATH (a directory holding `axe.min.js`, e.g.
 * an `npm install --prefix /tmp/axe axe-core`) or the project's own dependency.
 */
function axeSource(): string {
  const dir = process.env.AXE_CORE_PATH;
  const file =
    dir !== undefined && dir !== ''
      ? path.join(dir, 'axe.min.js')
      : require.resolve('axe-core/axe.min.js');
  return readFileSync(file, 'utf8');
}

/** Where the e2e run leaves the axe report and the screenshots of the main pages (gitignored). */
const REPORT_DIR = path.join(process.cwd(), '.run', 'console-e2e');
/** Every page audited: its name and the serious or critical violations axe found on it. */
const axeReport: Array<{ page: string; width: number; serious: unknown[] }> = [];

/**
 * The page as it stands, at 1366 and at 390 px wide: axe's serious and critical violations
 * (injected through the DevTools protocol, so the page's CSP stays strict), a screenshot of each
 * width, and the width the page needs (nothing wider than the viewport at 390).
 */
async function auditPage(page: Page, name: string): Promise<{ overflow: number }> {
  mkdirSync(REPORT_DIR, { recursive: true });
  let overflow = 0;
  for (const width of [1366, 390]) {
    await page.setViewportSize({ width, height: width === 390 ? 844 : 900 });
    const installed = await page.evaluate<boolean>('typeof axe !== "undefined"');
    if (!installed) await page.evaluate(axeSource());
    const result = await page.evaluate<{
      violations: Array<{ id: string; impact: string; nodes: unknown[]; help: string }>;
    }>(`axe.run(document, { resultTypes: ['violations'] })`);
    const serious = result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => ({ id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.length }));
    axeReport.push({ page: name, width, serious });
    await page.screenshot({ path: path.join(REPORT_DIR, `${name}-${width}.png`), fullPage: true });
    if (width === 390) {
      overflow = await page.evaluate<number>(
        'document.documentElement.scrollWidth - document.documentElement.clientWidth',
      );
    }
  }
  await page.setViewportSize({ width: 1280, height: 720 });
  return { overflow };
}

/** Polls `read` until `ok` holds (or fails with the last value after `timeoutMs`). */
async function eventually<T>(
  read: () => T | Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 15_000,
) {
  const deadline = Date.now() + timeoutMs;
  let value = await read();
  while (!ok(value)) {
    if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(value)}`);
    await new Promise((r) => setTimeout(r, 200));
    value = await read();
  }
  return value;
}

describe('console: safe by default', () => {
  it('every response carries the strict headers; a bad token is refused as the API says; the session cookie is HttpOnly, SameSite=Strict and sealed', async () => {
    for (const route of ['/sign-in', '/sagas', '/assets/console.js', '/health/live']) {
      const response = await fetch(`${consoleUrl}${route}`, { redirect: 'manual' });
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'self'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
      expect(response.headers.get('x-frame-options')).toBe('DENY');
      expect(response.headers.get('referrer-policy')).toBe('no-referrer');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
    await person('sign-in', async (page, ctx) => {
      await page.goto(`${consoleUrl}/sign-in`);
      await page.locator('input[name="token"]').fill(`not-a-token-${randomUUID()}`);
      await page.locator('#signInForm button[type="submit"]').click();
      // The API's own words for a bad token.
      await expect(page.locator('#apiError').textContent()).resolves.toContain(
        'a valid admin bearer token is required',
      );
      await signIn(page, OPERATOR);
      await expect(page.locator('#who').textContent()).resolves.toBe('fiona-finance (operator)');
      await expect(page.locator('#scope').textContent()).resolves.toBe('all merchants');
      const [cookie] = await ctx.cookies(consoleUrl);
      expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
      expect(cookie?.value).not.toContain(OPERATOR);
      expect(await page.evaluate<string>('document.cookie')).toBe('');
      expect(await inlineCode(page)).toBe(0);

      // The CSP is live: an inline script injected into the page does not run and is reported.
      const before = violations.length;
      const ran = await page.evaluate<boolean>(`(async () => {
        const script = document.createElement('script');
        script.textContent = 'window.__inlineRan = true;';
        document.body.appendChild(script);
        await new Promise((r) => setTimeout(r, 200));
        return window.__inlineRan === true;
      })()`);
      expect(ran).toBe(false);
      await eventually(
        () => violations.length,
        (n) => n > before,
      );
      violations.splice(before);

      await page.locator('#signOut').click();
      await page.waitForURL(`${consoleUrl}/sign-in`);
      await page.goto(`${consoleUrl}/sagas`);
      await page.waitForURL(`${consoleUrl}/sign-in`);
    });
  });
});

describe('console: find, see, act', () => {
  it('a finance user approves a two-step payout and sees paid-out arrive', async () => {
    const check = payoutCheck({ amountMinor: 4_200 });
    await stack.sendRaw(check);
    await stack.events.waitForPayout(check.payoutId, ['payout-registered'], 60_000);
    await person('approve-payout', async (page) => {
      await signIn(page, OPERATOR);
      await page.locator('#viewPayouts').click();
      const row = page.locator(`tr[data-saga="${check.payoutId}"]`);
      await expect(row.locator('.status').textContent()).resolves.toBe('registered');
      // The deadline counts down (console.js), from the API's deadline.
      await eventually(
        () => row.locator('.countdown').textContent(),
        (t) => /\d+m \d+s left/.test(t ?? ''),
      );
      await row.locator(`a[href="/sagas/${check.payoutId}"]`).click();
      await page.locator('#actions a[data-action="approve"]').click();
      await expect(page.locator('#willHappen').textContent()).resolves.toContain('approved');
      await page.locator('textarea[name="reason"]').fill('seller verified by phone');
      await page.locator('#confirm').click();
      await page.waitForURL((u) => u.pathname === `/sagas/${check.payoutId}`);
      // htmx polls the saga until its version moves on; paid-out arrives on the page.
      await page.locator('#progress li[data-type="paid-out"]').waitFor({ timeout: 60_000 });
      await expect(page.locator('#progressStatus').textContent()).resolves.toBe('paid');
      // The summary came along with the progress box: no stale status under a new one.
      await eventually(
        () => page.locator('#sagaStatus').textContent(),
        (t) => t === 'paid',
      );
      await page.reload();
      const audit = page.locator('#audit tr[data-action="approve"]');
      await expect(audit.textContent()).resolves.toContain('fiona-finance');
      await expect(audit.locator('.reason').textContent()).resolves.toBe(
        'seller verified by phone',
      );
      expect(await inlineCode(page)).toBe(0);
      // Paid: nothing is offered any more, and a path naming an action is not found, in words.
      await eventually(
        async () => {
          await page.reload();
          return page.locator('#actions').count();
        },
        (n) => n === 0,
      );
      const reject = await page.goto(`${consoleUrl}/sagas/${check.payoutId}/actions/reject`);
      expect(reject?.status()).toBe(404);
      await expect(page.locator('#notOffered').textContent()).resolves.toContain(
        'does not offer “reject” to you now',
      );
      // A crafted link naming another saga inside the action stays on this saga's path: 404.
      const other = randomUUID();
      const crafted = await page.goto(
        `${consoleUrl}/sagas/${check.payoutId}/actions/..%2F..%2F${other}%2Factions%2Freject`,
      );
      expect(crafted?.status()).toBe(404);
      expect(await page.locator('form#confirmForm').count()).toBe(0);
    });
    const approved = await stack.events.waitForPayout(check.payoutId, ['payout-approved'], 5_000);
    expect(approved.event).toMatchObject({ approvedBy: 'fiona-finance' });
    expect(violations).toEqual([]);
  });

  it('a support user finds a sale by its merchant order id and reads its timeline, with no action offered', async () => {
    const paymentId = await approvedSale(12_345);
    await person('support-find', async (page) => {
      await signIn(page, VIEWER);
      await page.locator('input[name="merchantOrderId"]').fill(paymentId);
      await page.locator('#searchForm button[type="submit"]').click();
      const rows = page.locator('#results tbody tr');
      await expect(rows.count()).resolves.toBe(1);
      await rows.locator(`a[href="/sagas/${paymentId}"]`).click();
      const types = await page
        .locator('#timeline li')
        .evaluateAll((items) => items.map((i) => i.getAttribute('data-type')));
      expect(types).toEqual(expect.arrayContaining(['operation-requested', 'approved']));
      await expect(page.locator('#money').textContent()).resolves.toMatch(
        /Captured\s*123\.45 USD[\s\S]*Remaining\s*123\.45 USD/,
      );
      await expect(page.locator('#sagaStatus').textContent()).resolves.toBe('approved');
      expect(await page.locator('#actions').count()).toBe(0);
      const text = (await page.content()) ?? '';
      expect(text).not.toContain(TEST_CARD_NUMBER);
      expect(text).not.toContain('sealedCard');
      expect(await inlineCode(page)).toBe(0);
    });
    expect(violations).toEqual([]);
  });

  it('a support user finds a declined sale by its amount and reads each gateway request’s answer', async () => {
    const sale = stack.sale({ amountMinor: 4_217, currency: 'USD', cvv: '116' });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['declined'], 60_000);
    await person('support-declined', async (page) => {
      await signIn(page, VIEWER);
      await page.goto(`${consoleUrl}/sagas?minAmount=42.17&maxAmount=42.17&currency=USD`);
      const row = page.locator(`tr[data-saga="${sale.paymentId}"]`);
      await expect(row.textContent()).resolves.toContain('42.17 USD');
      await row.locator('a').first().click();
      await expect(page.locator('#sagaStatus').textContent()).resolves.toBe('declined');
      await expect(page.locator('#summary').textContent()).resolves.toContain('42.17 USD');
      const answer = page.locator('#gatewayRequests li').first().locator('.answer');
      await expect(answer.textContent()).resolves.toContain('declined');
      // The gateway's code, and beside it what it means in plain words.
      await expect(answer.locator('code').textContent()).resolves.toBe('116');
      await expect(answer.locator('.declineReason').textContent()).resolves.toContain(
        'insufficient funds',
      );
      await expect(
        page.locator('#timeline li[data-type="declined"] .declineReason').textContent(),
      ).resolves.toContain('insufficient funds');
    });
    expect(violations).toEqual([]);
  });

  it('pages by the API cursor both ways, opens the canned views, and refuses a filter value in words', async () => {
    const older = await approvedSale(13_579);
    const newer = await approvedSale(13_579);
    await person('paging', async (page) => {
      await signIn(page, VIEWER);
      // Amounts typed in major units (the currency's exponent), the selects keep what was chosen.
      await page.goto(`${consoleUrl}/sagas`);
      await page.locator('select[name="currency"]').selectOption('USD');
      await page.locator('input[name="minAmount"]').fill('135.79');
      await page.locator('input[name="maxAmount"]').fill('135.79');
      await page.locator('input[name="limit"]').fill('1');
      await page.locator('#searchForm button[type="submit"]').click();
      await page.waitForURL((u) => u.searchParams.get('minAmount') === '135.79');
      const ids = () =>
        page
          .locator('#results tbody tr')
          .evaluateAll((rows) =>
            rows.map((r) =>
              (r as { getAttribute(n: string): string | null }).getAttribute('data-saga'),
            ),
          );
      expect(await ids()).toEqual([newer]);
      // A page link is a navigation: its rows are read once the new page has loaded (read at
      // once, they were the rows of neither page, on a loaded machine).
      const follow = async (link: string) => {
        const target = new URL((await page.locator(link).getAttribute('href')) ?? '', page.url());
        await page.locator(link).click();
        await page.waitForURL((u) => u.href === target.href);
      };
      await follow('#nextPage');
      expect(await ids()).toEqual([older]);
      expect(await page.locator('#nextPage').count()).toBe(0);
      await follow('#previousPage');
      expect(await ids()).toEqual([newer]);
      expect(await page.locator('#previousPage').count()).toBe(0);
      await expect(page.locator('#results').textContent()).resolves.toContain('135.79 USD');
      // Times in the viewer's zone, UTC on hover.
      const created = page.locator('#results tbody tr time.local').first();
      expect(await created.getAttribute('data-local')).toBe('1');
      expect(await created.getAttribute('title')).toMatch(/Z \(UTC\)$/);

      // A saga id goes straight to its story; one that is not a saga id, the API says why.
      await page.locator('input[name="id"]').fill(older);
      await page.locator('#searchForm button[type="submit"]').click();
      await page.waitForURL(`${consoleUrl}/sagas/${older}`);
      await expect(page.locator('#sagaId').textContent()).resolves.toBe(older);
      await page.goto(`${consoleUrl}/sagas?id=not-a-saga`);
      await expect(page.locator('#apiError').textContent()).resolves.toContain('uuid');

      // A value no select offers (a crafted URL) is refused in words, not silently unmatched.
      const sale = await page.goto(`${consoleUrl}/sagas?flow=sale`);
      expect(sale?.status()).toBe(400);
      await expect(page.locator('#filterError').textContent()).resolves.toContain(
        'Flow “sale” is not one the orchestrator runs',
      );
      await page.goto(`${consoleUrl}/sagas?currency=USD&minAmount=1.001`);
      await expect(page.locator('#filterError').textContent()).resolves.toContain(
        'at most 2 after the point',
      );
      // The API's own validation, shown as it says it.
      await page.goto(`${consoleUrl}/sagas?endpoint=${'x'.repeat(300)}`);
      expect(await page.locator('#apiError').textContent()).toContain('BAD_REQUEST');

      // Canned views are the API's filters: a sale approved a moment ago is in none of them.
      for (const view of ['#viewUnknown', '#viewPayouts', '#viewSchedules']) {
        await page.locator(view).click();
        await page.locator('#results').waitFor();
        expect(await page.locator(`tr[data-saga="${newer}"]`).count()).toBe(0);
      }
      expect(new URL(page.url()).searchParams.get('flow')).toBe('recurring-schedule');
    });
    expect(violations).toEqual([]);
  });

  it('an operator resolves a payment left unknown by a sandbox fault and sees the gateway answer settle it', async () => {
    const sale = stack.sale({ amountMinor: 31_400, currency: 'USD' });
    await stack.controls.addFault({ clientOrderId: sale.paymentId, outcome: 'unknown' });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['outcome-unknown'], 60_000);
    // The orchestrator asks the gateway by itself every 3-5 s for 5 minutes, then every 5-10
    // minutes: with its clock 6 minutes on, the poll due fires once more (answered "unknown") and
    // the next is minutes away, so only the operator's request can hear the gateway's answer.
    const statusQueries = async () => {
      const response = await fetch(`${stack.urls.orchestrator}/admin/sagas/${sale.paymentId}`, {
        headers: { authorization: `Bearer ${VIEWER}` },
      });
      const body = (await response.json()) as { gatewayRequests: Array<{ operation: string }> };
      return body.gatewayRequests.filter((r) => r.operation === 'status').length;
    };
    const polled = await statusQueries();
    await stack.advanceOrchestratorClock(6 * 60);
    await eventually(statusQueries, (n) => n > polled, 30_000);
    await sleep(5_000); // that last poll's answer reached the saga before the gateway's changes
    // From now on the gateway knows the answer: approved (what a status query will say).
    const [orderId] = await stack.controls.orderIds(sale.paymentId);
    await stack.controls.overrideStatus(orderId ?? '', 'approved');
    await person('resolve-unknown', async (page) => {
      await signIn(page, OPERATOR);
      await page.goto(
        `${consoleUrl}/sagas?unknownOlderThanSeconds=0&merchantOrderId=${sale.paymentId}`,
      );
      await page.locator(`tr[data-saga="${sale.paymentId}"] a`).click();
      await expect(page.locator('#sagaStatus').textContent()).resolves.not.toBe('approved');
      // The money is not 0.00 but unknown: the gateway may have charged it.
      await expect(page.locator('#moneyCaveat').textContent()).resolves.toContain(
        'unknown — the gateway may have charged 314.00 USD',
      );
      await expect(page.locator('#money').textContent()).resolves.not.toContain('0.00');
      await page.locator('#actions a[data-action="resolve-unknown"]').click();
      await expect(page.locator('#willHappen').textContent()).resolves.toContain(
        'asks the gateway',
      );
      await page.locator('textarea[name="reason"]').fill('customer asks whether charged');
      await page.locator('#confirm').click();
      await page.locator('#progress li[data-type="approved"]').waitFor({ timeout: 60_000 });
      await expect(page.locator('#progressStatus').textContent()).resolves.toBe('approved');
      expect(await page.locator('#progress li[data-type="command-rejected"]').count()).toBe(0);
      await page.reload();
      await expect(page.locator('#audit tr[data-action="resolve-unknown"]').count()).resolves.toBe(
        1,
      );
    });
    expect(violations).toEqual([]);
  });

  it('an operator pauses, resumes and cancels a schedule, each step arriving on the page and in the audit', async () => {
    const paymentId = await approvedSale(1_000);
    const base = () => ({
      commandId: randomUUID(),
      merchant: { endpointId: SANDBOX_MERCHANT.plainEndpoint },
      occurredAt: new Date().toISOString(),
    });
    await stack.sendRaw({ type: 'create-card-ref', ...base(), paymentId });
    const created = await stack.events.waitForType(paymentId, ['card-ref-created'], 60_000);
    const refId = (created.event as { cardRef: { refId: string } }).cardRef.refId;
    const scheduleId = randomUUID();
    const schedule: CreateScheduleCommand = {
      type: 'create-schedule',
      ...base(),
      scheduleId,
      cardRef: { refId },
      amount: { minor: 990, currency: 'USD' },
      description: 'Plan console',
      rule: {
        period: 'month',
        interval: 1,
        startDate: new Date(Date.now() + 40 * 86_400_000).toISOString().slice(0, 10),
        timeOfDay: '12:00',
        timeZone: 'UTC',
        end: { kind: 'never' },
      },
    };
    await stack.sendRaw(schedule);
    await stack.events.waitForSchedule(scheduleId, (e) => e.type === 'schedule-created', 60_000);
    await person('schedule', async (page) => {
      await signIn(page, OPERATOR);
      await page.locator('#viewSchedules').click();
      await page.locator(`tr[data-saga="${scheduleId}"] a`).click();
      for (const [action, event] of [
        ['pause', 'schedule-paused'],
        ['resume', 'schedule-resumed'],
        ['cancel', 'schedule-cancelled'],
      ] as const) {
        await page.locator(`#actions a[data-action="${action}"]`).click();
        await page.locator('textarea[name="reason"]').fill(`customer asked to ${action}`);
        await page.locator('#confirm').click();
        await page.locator(`#progress li[data-type="${event}"]`).waitFor({ timeout: 60_000 });
        // The actions offered follow the state (a paused schedule offers resume): the page anew.
        if (action !== 'cancel') await page.goto(`${consoleUrl}/sagas/${scheduleId}`);
      }
      // The status comes with a later poll of the progress box when the saga's summary lags its
      // history (failed once under npm test's load: the event listed, the status still 'active').
      await page
        .locator('#progressStatus', { hasText: /^cancelled$/ })
        .waitFor({ timeout: 30_000 });
      await page.reload();
      const audited = await page
        .locator('#audit tbody tr')
        .evaluateAll((rows) =>
          rows.map((r) =>
            (r as { getAttribute(n: string): string | null }).getAttribute('data-action'),
          ),
        );
      expect(audited).toEqual(['pause', 'resume', 'cancel']);
    });
    expect(violations).toEqual([]);
  });

  it('a viewer sees no action, and a forged action (no CSRF token, or a viewer’s session) is refused', async () => {
    const check = payoutCheck({ amountMinor: 4_300 });
    await stack.sendRaw(check);
    await stack.events.waitForPayout(check.payoutId, ['payout-registered'], 60_000);
    const actionUrl = `${consoleUrl}/sagas/${check.payoutId}/actions/approve`;
    await person('viewer-forges', async (page, ctx) => {
      await signIn(page, VIEWER);
      await page.goto(`${consoleUrl}/sagas/${check.payoutId}`);
      await expect(page.locator('#sagaStatus').textContent()).resolves.toBe('registered');
      expect(await page.locator('#actions').count()).toBe(0);
      // A POST with the session cookie but without the form's token: refused by the console.
      const noToken = await ctx.request.post(actionUrl, { form: { reason: 'forged' } });
      expect(noToken.status()).toBe(403);
      expect(await noToken.text()).toContain('CSRF_TOKEN_INVALID');
      // The saga offers a viewer no action: its path is not found, said in plain words, and a
      // POST with the viewer's own valid CSRF token is refused the same way before the API.
      const notOffered = await page.goto(actionUrl);
      expect(notOffered?.status()).toBe(404);
      await expect(page.locator('#notOffered').textContent()).resolves.toContain(
        'does not offer “approve” to you now',
      );
      const csrf = await page.locator('input[name="_csrf"]').first().inputValue();
      const withToken = await ctx.request.post(actionUrl, {
        form: { reason: 'I am only a viewer', _csrf: csrf },
      });
      expect(withToken.status()).toBe(404);
    });
    await person('operator-forged', async (page, ctx) => {
      await signIn(page, OPERATOR);
      const noToken = await ctx.request.post(actionUrl, {
        form: { reason: 'forged', _csrf: 'guessed' },
      });
      expect(noToken.status()).toBe(403);
      await page.goto(`${consoleUrl}/sagas/${check.payoutId}`);
      await expect(page.locator('#auditEmpty').count()).resolves.toBe(1);
      await expect(page.locator('#sagaStatus').textContent()).resolves.toBe('registered');
    });
    expect(violations).toEqual([]);
  });
});

describe('console: Watch', () => {
  it('the live view shows the outcome events produced while it is open, card-free, and counts them per minute', async () => {
    await person('watch', async (page) => {
      await signIn(page, VIEWER);
      await page.locator('#viewWatch').click();
      await page.waitForURL(`${consoleUrl}/watch`);
      // The console server has opened the API's stream for this page.
      await page.locator('#liveStatus[data-state="live"]').waitFor();
      const amounts = [12_345, 6_789];
      const sales = amounts.map((amountMinor) => stack.sale({ amountMinor, currency: 'USD' }));
      for (const sale of sales) await stack.send(sale);
      for (const [i, sale] of sales.entries()) {
        const row = page.locator(
          `#liveEvents tr[data-saga="${sale.paymentId}"][data-type="approved"]`,
        );
        await row.waitFor({ timeout: 60_000 });
        await expect(row.textContent()).resolves.toContain(`${(amounts[i] ?? 0) / 100} USD moved`);
        await expect(
          page
            .locator(
              `#liveEvents tr[data-saga="${sale.paymentId}"][data-type="operation-requested"]`,
            )
            .count(),
        ).resolves.toBe(1);
      }
      // Whitelisted fields only: the approved events carry a card summary, the rows do not.
      const rows = (await page.locator('#liveEvents').innerHTML()).replace(/\s+/g, ' ');
      expect(rows).not.toContain(TEST_CARD_NUMBER.slice(0, 6));
      expect(rows).not.toContain(TEST_CARD_NUMBER.slice(-4));
      // The chart (polled every 5 s) counts them: at least these events and this money moved.
      const moved = await eventually(
        async () =>
          Number(
            (await page
              .locator('#minuteTotals .moved-total[data-currency="USD"]')
              .getAttribute('data-minor', { timeout: 1_000 })
              .catch(() => '0')) ?? '0',
          ),
        (minor) => minor >= 12_345 + 6_789,
        20_000,
      );
      expect(moved).toBeGreaterThanOrEqual(19_134);
      const events = Number(await page.locator('#minuteTotals').getAttribute('data-events'));
      expect(events).toBeGreaterThanOrEqual(4);
      await expect(page.locator('#chartEvents rect.bar').count()).resolves.toBe(30);
      expect(await inlineCode(page)).toBe(0);
    });
  });

  it('the live stream needs a session: without one the console refuses it, and the API refuses it without a token', async () => {
    const anonymous = await fetch(`${consoleUrl}/watch/events`);
    expect(anonymous.status).toBe(401);
    const bare = await fetch(`${stack.urls.orchestrator}/admin/live/events`);
    expect(bare.status).toBe(401);
  });
});

describe('console: dead letters', () => {
  interface Letter {
    at: string;
    reason: string;
    originalTopic?: string;
    replayedFrom?: string;
  }
  /** The dead letters as the admin API lists them (the operator's token). */
  async function deadLetters(): Promise<Letter[]> {
    const response = await fetch(`${stack.urls.orchestrator}/admin/dead-letters?limit=500`, {
      headers: { authorization: `Bearer ${OPERATOR}` },
    });
    expect(response.status).toBe(200);
    return ((await response.json()) as { items: Letter[] }).items;
  }
  async function replaysOf(
    at: string,
  ): Promise<Array<{ actor: string; role: string; reason: string }>> {
    const client = new Client({ connectionString: e2e.orchestratorDb.url });
    await client.connect();
    try {
      const { rows } = await client.query<{ actor: string; role: string; reason: string }>(
        `SELECT actor, role, reason FROM dead_letter_replays WHERE dead_letter = $1`,
        [at],
      );
      return rows;
    } finally {
      await client.end();
    }
  }

  it('an operator sees a poison command and replays it (audited; it is dead-lettered again, naming where it came from); a viewer cannot', async () => {
    const before = new Set((await deadLetters()).map((l) => l.at));
    // Truncated JSON on the commands topic: the orchestrator dead-letters it at once.
    await stack.sendRaw('{"type":"sale","paymentId":');
    const [poison] = await eventually(
      async () => (await deadLetters()).filter((l) => !before.has(l.at)),
      (fresh) => fresh.length > 0,
      60_000,
    );
    const at = poison.at;
    expect(poison).toMatchObject({ reason: 'parse', originalTopic: 'payments.commands.v1' });
    const row = (page: Page) => page.locator(`#deadLetters tr[data-at="${at}"]`);

    await person('dlq-viewer', async (page, ctx) => {
      await signIn(page, VIEWER);
      await page.locator('#viewDeadLetters').click();
      await page.waitForURL(`${consoleUrl}/dead-letters`);
      await expect(row(page).locator('.reason').textContent()).resolves.toBe('parse');
      expect(await page.locator('a.replay').count()).toBe(0);
      // Without the form's token the console refuses; with it (the viewer's own session), the API does.
      const noToken = await ctx.request.post(`${consoleUrl}/dead-letters/replay`, {
        form: { at, reason: 'forged' },
      });
      expect(noToken.status()).toBe(403);
      expect(await noToken.text()).toContain('CSRF_TOKEN_INVALID');
      await page.goto(`${consoleUrl}/dead-letters/replay?at=${encodeURIComponent(at)}`);
      await page.locator('textarea[name="reason"]').fill('I am only a viewer');
      const [answer] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.locator('#confirm').click(),
      ]);
      expect(answer.status()).toBe(403);
      await expect(page.locator('#apiError').textContent()).resolves.toContain('FORBIDDEN');
    });
    expect(await replaysOf(at)).toEqual([]);

    await person('dlq-operator', async (page) => {
      await signIn(page, OPERATOR);
      await page.goto(`${consoleUrl}/dead-letters`);
      // Where, when and why — not the record's value.
      await expect(row(page).textContent()).resolves.not.toContain('paymentId');
      await row(page).locator('a.replay').click();
      await page.locator('textarea[name="reason"]').fill('parser fixed, trying again');
      await page.locator('#confirm').click();
      await page.waitForURL(/\/dead-letters\?replayed=/);
      await expect(page.locator('#replayed').textContent()).resolves.toContain(at);
      expect(await inlineCode(page)).toBe(0);
    });
    expect(await replaysOf(at)).toEqual([
      { actor: 'fiona-finance', role: 'operator', reason: 'parser fixed, trying again' },
    ]);
    // The replayed record went back to payments.commands.v1 and, still not JSON, came back here.
    const again = await eventually(
      async () => (await deadLetters()).filter((l) => l.replayedFrom === at),
      (found) => found.length === 1,
      60_000,
    );
    expect(again[0]).toMatchObject({ reason: 'parse', originalTopic: 'payments.commands.v1' });
    expect(violations).toEqual([]);
  });
});

describe('console: Reconciliation', () => {
  it('lists the runs and, in the run that checked it, a sale the gateway now reads declined, linked to its story', async () => {
    const paymentId = await approvedSale(27_100);
    const [order] = await stack.controls.orderIds(paymentId);
    await stack.controls.overrideStatus(order ?? '', 'declined');
    await person('reconciliation', async (page) => {
      await signIn(page, VIEWER);
      // The scheduled run of the sale's window reports it; the list shows runs as they come.
      const runId = await eventually(
        async () => {
          await page.goto(`${consoleUrl}/reconciliation`);
          for (const row of await page.locator('#runs tr[data-run]').all()) {
            if ((await row.getAttribute('data-mismatched')) === '0') continue;
            const id = (await row.getAttribute('data-run')) ?? '';
            const answer = await fetch(
              `${stack.urls.orchestrator}/admin/reconciliation/runs/${id}`,
              {
                headers: { authorization: `Bearer ${VIEWER}` },
              },
            );
            const body = (await answer.json()) as { mismatches: Array<{ sagaId: string }> };
            if (body.mismatches.some((m) => m.sagaId === paymentId)) return id;
          }
          return undefined;
        },
        (id) => id !== undefined,
        120_000,
      );
      await page.locator(`#runs tr[data-run="${runId}"] a`).click();
      const row = page.locator(`#mismatches tr[data-saga="${paymentId}"]`);
      await expect(row.getAttribute('data-kind')).resolves.toBe('reported-charged-but-not');
      await row.locator('a').click();
      await page.waitForURL(`${consoleUrl}/sagas/${paymentId}`);
      expect(await inlineCode(page)).toBe(0);
    });
  });
});

/** The CSRF token of the page's forms (every signed-in page has the sign-out form). */
async function csrfOf(page: Page): Promise<string> {
  return (await page.locator('input[name="_csrf"]').first().getAttribute('value')) ?? '';
}

/** An admin API answer with a token (to compare what a page shows with what the API says). */
async function adminGet<T>(route: string, token: string): Promise<T> {
  const response = await fetch(`${stack.urls.orchestrator}${route}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  if (!response.ok) throw new Error(`GET ${route}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

describe('console: cases, decided by two people', () => {
  it('an operator proposes from the evidence, is told why they cannot approve it, and an approver approves: the saga settles by decision', async () => {
    // The gateway charges 90.00 of a 100.00 sale: an amount mismatch, alerted, becomes a case.
    const sale = stack.sale({ cvv: '123', amountMinor: 10_000, currency: 'USD' });
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
    const opened = await eventually(
      () => adminGet<Array<{ caseId: string; sagaId: string }>>('/admin/cases', OPERATOR),
      (cases) => cases.some((c) => c.sagaId === sale.paymentId),
      60_000,
    );
    const caseId = opened.find((c) => c.sagaId === sale.paymentId)?.caseId ?? '';
    const overflows: Record<string, number> = {};

    await person('case-propose', async (page) => {
      await signIn(page, OPERATOR);
      await page.locator('#viewCases').click();
      await page.waitForURL(`${consoleUrl}/cases`);
      // Filters: the status (the API's) and the merchant (a select of those listed).
      await page.locator('#caseFilters select[name="status"]').selectOption('open');
      await page.locator('#caseFilters select[name="endpoint"]').selectOption(ENDPOINT);
      await page.locator('#caseFilters button[type="submit"]').click();
      await page.waitForURL(/status=open/);
      const row = page.locator(`tr[data-case="${caseId}"]`);
      await expect(row.locator('.status').textContent()).resolves.toBe('open');
      await expect(row.textContent()).resolves.toContain('100.00 USD');
      await expect(row.textContent()).resolves.toContain('90.00 USD');
      overflows.cases = (await auditPage(page, 'cases')).overflow;
      await page.goto(`${consoleUrl}/cases?status=closed`);
      expect(await page.locator(`tr[data-case="${caseId}"]`).count()).toBe(0);

      await page.goto(`${consoleUrl}/cases/${caseId}`);
      await expect(page.locator('#fourEyes').textContent()).resolves.toContain('different');
      expect(await page.locator('#evidence tbody tr').count()).toBeGreaterThan(0);
      await expect(page.locator('#case').textContent()).resolves.toContain('90.00 USD');
      // The form is prefilled with the gateway's amount in major units.
      await expect(page.locator('#proposeForm input[name="amount"]').inputValue()).resolves.toBe(
        '90.00',
      );
      await page.locator('#proposeForm select[name="decision"]').selectOption('done');
      await page
        .locator('#proposeForm input[name="amountWhy"]')
        .fill('the status reply says 90.00 was charged');
      await page.locator('#proposeForm textarea[name="reason"]').fill('acquirer statement: 90.00');
      await page.locator('#propose').click();
      await page.waitForURL(`${consoleUrl}/cases/${caseId}`);
      await expect(page.locator('#caseStatus').textContent()).resolves.toBe('proposed');
      await expect(page.locator('#proposal').getAttribute('data-by')).resolves.toBe(
        'fiona-finance',
      );
      // The proposer is told why they cannot approve; no approve button.
      await expect(page.locator('#cannotApprove').getAttribute('data-why')).resolves.toBe(
        'same-person',
      );
      await expect(page.locator('#cannotApprove').textContent()).resolves.toContain(
        'a different person with the approver role must approve it',
      );
      expect(await page.locator('#approveForm').count()).toBe(0);
      overflows['case-proposed'] = (await auditPage(page, 'case-proposed')).overflow;
      // Approving anyway (a crafted POST) is refused by the API, shown as a page in words.
      const forged = await page.request.post(`${consoleUrl}/cases/${caseId}/approve`, {
        form: { _csrf: await csrfOf(page) },
        maxRedirects: 0,
      });
      expect(forged.status()).toBe(403);
      expect(forged.headers()['content-type']).toContain('text/html');
      expect(await forged.text()).toContain('id="apiError"');
    });

    await person('case-approve', async (page) => {
      await signIn(page, APPROVER);
      await page.goto(`${consoleUrl}/cases/${caseId}`);
      await expect(page.locator('#approveForm').textContent()).resolves.toContain('fiona-finance');
      overflows['case-approve'] = (await auditPage(page, 'case-approve')).overflow;
      await page.locator('#approve').click();
      await page.waitForURL(`${consoleUrl}/cases/${caseId}`);
      await expect(page.locator('#caseStatus').textContent()).resolves.toBe('closed');
      await expect(page.locator('#decided').getAttribute('data-approved-by')).resolves.toBe(
        'adam-approver',
      );
      await expect(page.locator('#decided').textContent()).resolves.toContain('90.00 USD');
      const actions = await page
        .locator('#caseAudit tbody tr')
        .evaluateAll((rows) =>
          rows.map((r) => `${r.getAttribute('data-action')}:${r.getAttribute('data-actor')}`),
        );
      expect(actions).toEqual(
        expect.arrayContaining(['proposed:fiona-finance', 'approved:adam-approver']),
      );
    });
    // The saga settles by the decision (its own event, never an ordinary approval).
    const settled = await stack.events.waitForType(sale.paymentId, ['settled-by-decision'], 60_000);
    expect(settled.event).toMatchObject({ decision: 'done', amount: { minor: 9_000 } });
    expect(Object.entries(overflows).filter(([, px]) => px > 0)).toEqual([]);
    expect(violations).toEqual([]);
  });

  it('a merchant-scoped viewer sees the scope in the header, the Endpoint select offers it alone, and cases offer them no step', async () => {
    await person('merchant-viewer', async (page) => {
      await signIn(page, MERCHANT_VIEWER);
      await expect(page.locator('#scope').textContent()).resolves.toBe(`merchants ${ENDPOINT}`);
      const options = await page
        .locator('#searchForm select[name="endpoint"] option')
        .evaluateAll((os) => os.map((o) => o.getAttribute('value')));
      expect(options).toEqual(['', ENDPOINT]);
      const refused = await page.goto(`${consoleUrl}/sagas?endpoint=1111`);
      expect(refused?.status()).toBe(400);
      await expect(page.locator('#filterError').textContent()).resolves.toContain(
        'not one you can see',
      );
      await page.goto(`${consoleUrl}/cases`);
      const first = page.locator('#cases tbody tr a').first();
      await first.click();
      await page.waitForURL(/\/cases\/[0-9a-f-]+$/);
      expect(await page.locator('#proposeForm, #approveForm, #rejectForm').count()).toBe(0);
    });
    expect(violations).toEqual([]);
  });
});

describe('console: the day close', () => {
  it('a day not over cannot be closed (said in words); once over, the operator closes it and reads its totals as the API states them, and downloads them as CSV', async () => {
    const approved = await stack.events.waitForType(await approvedSale(7_700), ['approved']);
    const occurred = Date.parse(approved.event.occurredAt);
    const day = new Date(occurred + DAY_ZONE.offsetMs).toISOString().slice(0, 10);
    const dayEnds = Date.parse(`${day}T00:00:00.000Z`) + 86_400_000 - DAY_ZONE.offsetMs;
    const overflows: Record<string, number> = {};
    await person('day-close', async (page) => {
      await signIn(page, OPERATOR);
      await page.locator('#viewDayClose').click();
      await page.locator('#dayFilters input[name="day"]').fill(day);
      await page.locator('#dayFilters input[name="endpoint"]').fill(ENDPOINT);
      await page.locator('#dayFilters button[type="submit"]').click();
      await page.waitForURL(/day=/);
      await expect(page.locator('#notClosed').textContent()).resolves.toContain('not closed');
      // The day is not over in the merchant's zone: the API refuses, the page says so.
      const [early] = await Promise.all([
        page.waitForResponse((r) => r.request().method() === 'POST'),
        page.locator('#closeDay').click(),
      ]);
      expect(early.status()).toBe(409);
      await expect(page.locator('#apiError').textContent()).resolves.toContain('DAY_NOT_OVER');
      overflows['day-close-refused'] = (await auditPage(page, 'day-close-refused')).overflow;

      // The merchant's midnight passes (the orchestrator's clock moves just past it).
      const clock = (await (
        await fetch(`${stack.urls.orchestrator}/test-controls/clock`)
      ).json()) as { now: string };
      const seconds = Math.ceil((dayEnds - Date.parse(clock.now)) / 1000) + 2;
      expect(seconds).toBeLessThan(3 * 3600);
      if (seconds > 0) await stack.advanceOrchestratorClock(seconds);
      await page.goto(`${consoleUrl}/day-close?day=${day}&endpoint=${ENDPOINT}`);
      await page.locator('#closeDay').click();
      await page.waitForURL(/closed=1/);
      await expect(page.locator('#dayNotice').textContent()).resolves.toContain('Closed: 1');
      expect(await page.locator('#closeDay').count()).toBe(0);
      const [close] = await adminGet<
        Array<{
          count: number;
          closedBy: string;
          totals: Array<{ eventType: string; currency: string; count: number; sumMinor: string }>;
        }>
      >(`/admin/days/${day}?endpointId=${ENDPOINT}`, OPERATOR);
      expect(close?.closedBy).toBe('fiona-finance');
      const section = page.locator(`section.close[data-endpoint="${ENDPOINT}"]`);
      await expect(section.locator('.closeState').textContent()).resolves.toContain('closed');
      await expect(section.locator('.closeCount').textContent()).resolves.toContain(
        String(close?.count),
      );
      // Every total as the API states it, in major units (USD: two decimals).
      for (const total of close?.totals ?? []) {
        const cells = section.locator(
          `table.totals[data-currency="${total.currency}"] tr[data-event-type="${total.eventType}"] td`,
        );
        await expect(cells.nth(1).textContent()).resolves.toBe(String(total.count));
        const digits = total.sumMinor.padStart(3, '0');
        await expect(cells.nth(2).textContent()).resolves.toBe(
          `${digits.slice(0, -2).replace(/^0+(?=\d)/, '')}.${digits.slice(-2)} ${total.currency}`,
        );
      }
      expect(close?.totals.some((t) => t.eventType === 'approved')).toBe(true);
      overflows['day-close'] = (await auditPage(page, 'day-close')).overflow;

      // The CSV: a header, one row per total, minor and major units.
      const csv = await page.request.get(
        `${consoleUrl}${(await page.locator('#dayCsv').getAttribute('href')) ?? ''}`,
      );
      expect(csv.status()).toBe(200);
      expect(csv.headers()['content-type']).toContain('text/csv');
      expect(csv.headers()['content-disposition']).toContain(`day-close-${day}-${ENDPOINT}.csv`);
      const lines = (await csv.text()).trim().split('\r\n');
      expect(lines[0]).toMatch(
        /^section,day,endpoint,timeZone,currency,eventType,count,sumMinor,sum,/,
      );
      const approvedTotal = close?.totals.find((t) => t.eventType === 'approved');
      expect(lines).toContainEqual(
        expect.stringMatching(
          new RegExp(
            `^totals,${day},${ENDPOINT},${DAY_ZONE.name.replace(/[+]/g, '\\+')},USD,approved,${approvedTotal?.count},${approvedTotal?.sumMinor},`,
          ),
        ),
      );
    });
    expect(Object.entries(overflows).filter(([, px]) => px > 0)).toEqual([]);
    expect(violations).toEqual([]);
  });
});

describe('console: every page, checked by real tools', () => {
  afterAll(() => {
    mkdirSync(REPORT_DIR, { recursive: true });
    writeFileSync(path.join(REPORT_DIR, 'axe-report.json'), JSON.stringify(axeReport, null, 2));
  });

  it('axe finds no serious or critical violation on any page at 1366 or 390 px; the pages fit a phone', async () => {
    const saleId = await approvedSale(6_150);
    const check = payoutCheck({ amountMinor: 2_500 });
    await stack.sendRaw(check);
    await stack.events.waitForPayout(check.payoutId, ['payout-registered'], 60_000);
    const [run] = await adminGet<Array<{ id: string }>>(
      '/admin/reconciliation/runs?limit=1',
      OPERATOR,
    );
    const overflows: Record<string, number> = {};
    await person('audit', async (page) => {
      await page.goto(`${consoleUrl}/sign-in`);
      overflows['sign-in'] = (await auditPage(page, 'sign-in')).overflow;
      await signIn(page, OPERATOR);
      const pages: Array<[string, string]> = [
        ['search', `/sagas?currency=USD&minAmount=61.50&maxAmount=61.50`],
        ['saga-sale', `/sagas/${saleId}`],
        ['saga-payout', `/sagas/${check.payoutId}`],
        ['confirm-approve', `/sagas/${check.payoutId}/actions/approve`],
        ['watch', '/watch'],
        ['dead-letters', '/dead-letters'],
        ['reconciliation', '/reconciliation'],
        ['reconciliation-run', `/reconciliation/${run?.id ?? 'none'}`],
        ['confirm-replay', '/dead-letters/replay?at=payments.commands.v1.dlq-0-0'],
        ['not-found', '/no-such-page'],
        ['filter-refused', '/sagas?flow=sale'],
      ];
      for (const [name, url] of pages) {
        await page.goto(`${consoleUrl}${url}`);
        overflows[name] = (await auditPage(page, name)).overflow;
      }
    });
    process.stdout.write(
      `axe (serious or critical violations per page and width): ${JSON.stringify(
        axeReport.map((r) => [r.page, r.width, r.serious.length]),
      )}\nscreenshots and axe-report.json in ${REPORT_DIR}\n`,
    );
    expect(axeReport.filter((r) => r.serious.length > 0)).toEqual([]);
    expect(Object.entries(overflows).filter(([, px]) => px > 0)).toEqual([]);
    expect(violations).toEqual([]);
  });
});

describe('console: sessions that end', () => {
  it('sign-out revokes the session: a cookie copied before it reads nothing afterwards', async () => {
    await person('sign-out', async (page, ctx) => {
      await signIn(page, OPERATOR);
      const copied = await ctx.cookies(consoleUrl);
      await page.locator('#signOut').click();
      await page.waitForURL(`${consoleUrl}/sign-in`);
      // The copy, replayed in another browser: the console opens it and finds it revoked.
      const thief = await browser.newContext();
      try {
        await thief.addCookies(copied);
        const stolen = await thief.newPage();
        await stolen.goto(`${consoleUrl}/sagas?flow=payout`);
        expect(new URL(stolen.url()).pathname).toBe('/sign-in');
        expect(await stolen.locator('#who').count()).toBe(0);
      } finally {
        await thief.close();
      }
    });
    expect(violations).toEqual([]);
  });

  it('a stale form is a page in plain words that links the page again, never raw JSON', async () => {
    await person('stale-form', async (page, ctx) => {
      await page.goto(`${consoleUrl}/sign-in`);
      // The session the form belongs to ends (its cookie is gone) before the form is sent.
      await ctx.clearCookies();
      await page.locator('input[name="token"]').fill(OPERATOR);
      const [answer] = await Promise.all([
        page.waitForResponse(
          (r) => r.url() === `${consoleUrl}/sign-in` && r.request().method() === 'POST',
        ),
        page.locator('#signInForm button[type="submit"]').click(),
      ]);
      expect(answer.status()).toBe(403);
      expect(answer.headers()['content-type']).toContain('text/html');
      await expect(page.locator('#refusal').textContent()).resolves.toContain('This form expired');
      await page.locator('#pageAgain').click();
      await page.waitForURL(`${consoleUrl}/sign-in`);
      await page.locator('input[name="token"]').fill(OPERATOR);
      await page.locator('#signInForm button[type="submit"]').click();
      await page.waitForURL(`${consoleUrl}/sagas`);
      // An address with no page: a page too.
      const missing = await page.goto(`${consoleUrl}/no-such-page`);
      expect(missing?.status()).toBe(404);
      await expect(page.locator('#refusal').textContent()).resolves.toContain(
        'There is no page at this address',
      );
    });
    expect(violations).toEqual([]);
  });
});

describe('console: a token the API stops knowing', () => {
  it('ends the session at the next page: the person is sent to sign in again', async () => {
    await person('revoked', async (page, ctx) => {
      await signIn(page, VIEWER);
      const sealedBefore = (await ctx.cookies(consoleUrl))[0]?.value;
      // The viewer's token is taken out of ADMIN_TOKENS (the orchestrator restarts with it gone).
      await stack.restart('orchestrator', 'SIGTERM', {
        ADMIN_TOKENS: adminTokens([{ name: 'fiona-finance', role: 'operator', token: OPERATOR }]),
      });
      await page.goto(`${consoleUrl}/sagas?flow=payout`);
      await page.waitForURL(`${consoleUrl}/sign-in`);
      // A new anonymous session replaced the signed-in one: the old cookie is gone.
      expect((await ctx.cookies(consoleUrl))[0]?.value).not.toBe(sealedBefore);
      await page.goto(`${consoleUrl}/sagas`);
      await page.waitForURL(`${consoleUrl}/sign-in`);
      await page.locator('input[name="token"]').fill(VIEWER);
      await page.locator('#signInForm button[type="submit"]').click();
      await expect(page.locator('#apiError').textContent()).resolves.toContain('UNAUTHENTICATED');
    });
    expect(violations).toEqual([]);
  });
});

// Last: it leaves this client's address throttled for the window.
describe('console: sign-in throttled', () => {
  it('refuses sign-in from a client after its failures, before asking the API, in plain words', async () => {
    await person('throttled', async (page) => {
      const statuses: number[] = [];
      for (let i = 0; i < 7 && !statuses.includes(429); i += 1) {
        await page.goto(`${consoleUrl}/sign-in`);
        await page.locator('input[name="token"]').fill(`guess-${randomUUID()}`);
        const [answer] = await Promise.all([
          page.waitForResponse((r) => r.request().method() === 'POST'),
          page.locator('#signInForm button[type="submit"]').click(),
        ]);
        statuses.push(answer.status());
      }
      // Five failures at most (earlier tests' bad tokens count too), then refused.
      expect(statuses.at(-1)).toBe(429);
      expect(statuses.slice(0, -1).every((s) => s === 401)).toBe(true);
      await expect(page.locator('#apiError').textContent()).resolves.toContain(
        'too many failed sign-ins',
      );
      // Even the right token now waits: the API is not asked.
      await page.goto(`${consoleUrl}/sign-in`);
      await page.locator('input[name="token"]').fill(OPERATOR);
      await page.locator('#signInForm button[type="submit"]').click();
      await expect(page.locator('#apiError').textContent()).resolves.toContain(
        'too many failed sign-ins',
      );
    });
    expect(violations).toEqual([]);
  });
});
