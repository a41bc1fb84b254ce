import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { RUN_DIR } from './processes';
import { TEST_CARD_NUMBER } from './sandbox-config';

/**
 * The payer's side played by a real browser: the Debian `chromium` (installed by
 * scripts/ensure-test-tools.sh) driven by playwright-core, headless, with a fresh profile per
 * launch. Used by the browser e2e tests and the demo's 3-D Secure part.
 */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-quic',
  '--no-first-run',
  '--disable-component-update',
  '--disable-sync',
] as const;

/** Where a failing browser step leaves its screenshot. */
export const SCREENSHOT_DIR = path.join(RUN_DIR, 'browser-screenshots');

export function chromiumInstalled(): boolean {
  return existsSync(CHROMIUM_PATH);
}

export class PayerBrowser {
  private constructor(
    private readonly context: BrowserContext,
    private readonly profileDir: string,
  ) {}

  /** One browser with a fresh user data dir (a temp dir, removed on close). */
  static async launch(): Promise<PayerBrowser> {
    const profileDir = mkdtempSync(path.join(tmpdir(), 'payer-chromium-'));
    const context = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM_PATH,
      headless: true,
      args: [...CHROMIUM_ARGS],
      timeout: 60_000,
    });
    context.setDefaultTimeout(20_000);
    return new PayerBrowser(context, profileDir);
  }

  /**
   * A fresh page for one payer; when `use` throws, a full-page screenshot is saved to
   * SCREENSHOT_DIR/<name>.png before the error goes on.
   */
  async withPage<T>(name: string, use: (page: Page) => Promise<T>): Promise<T> {
    const page = await this.context.newPage();
    try {
      return await use(page);
    } catch (error) {
      mkdirSync(SCREENSHOT_DIR, { recursive: true });
      const file = path.join(SCREENSHOT_DIR, `${name.replace(/[^\w.-]+/g, '_')}.png`);
      await page.screenshot({ path: file, fullPage: true }).catch(() => undefined);
      throw error;
    } finally {
      await page.close().catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    await this.context.close().catch(() => undefined);
    rmSync(this.profileDir, { recursive: true, force: true });
  }
}

/** The sandbox's ACS challenge page: the password the page hints at, or Cancel. */
export async function answerChallenge(page: Page, answer: 'hinted-password' | 'cancel') {
  await page.locator('#acsForm').waitFor();
  if (answer === 'cancel') {
    await page.locator('button[value="cancel"]').click();
    return;
  }
  const hint = (await page.locator('#acsHint code').textContent()) ?? '';
  await page.locator('input[name="password"]').fill(hint);
  await page.locator('button[value="submit"]').click();
}

export interface TestCardEntry {
  readonly number: string;
  readonly holder: string;
  readonly month: string;
  readonly year: string;
  readonly cvv: string;
}

/** The sandbox's test card as a payer types it, with this CVV (the CVV picks the outcome). */
export function testCard(cvv: string): TestCardEntry {
  return { number: TEST_CARD_NUMBER, holder: 'JANE DOE', month: '12', year: '2030', cvv };
}

/** The gateway's hosted payment page: the payer types the card there, never into our service. */
export async function fillHostedForm(page: Page, card: TestCardEntry) {
  await page.locator('#hppForm').waitFor();
  await page.locator('input[name="credit_card_number"]').fill(card.number);
  await page.locator('input[name="card_printed_name"]').fill(card.holder);
  await page.locator('input[name="expire_month"]').fill(card.month);
  await page.locator('input[name="expire_year"]').fill(card.year);
  await page.locator('input[name="cvv2"]').fill(card.cvv);
  await page.locator('#hppForm button[type="submit"]').click();
}

/**
 * The payee types the destination card on the gateway's payout form (it has no CVV field) and
 * submits it.
 */
export async function fillPayoutForm(page: Page, cardNumber: string, holder = 'JOHN PAYEE') {
  await page.locator('#hppForm').waitFor();
  await page.locator('input[name="credit_card_number"]').fill(cardNumber);
  await page.locator('input[name="card_printed_name"]').fill(holder);
  await page.locator('input[name="expire_month"]').fill('11');
  await page.locator('input[name="expire_year"]').fill('2031');
  await page.locator('#hppForm button[type="submit"]').click();
}

/**
 * The merchant's "thank you" page the payer lands on (callback-ingest's MERCHANT_RETURN_URL):
 * records each arrival's `payment` and `result` parameters.
 */
export class MerchantReturnPage {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly arrivals: { payment: string | null; result: string | null }[],
  ) {}

  static async start(): Promise<MerchantReturnPage> {
    const arrivals: MerchantReturnPage['arrivals'] = [];
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      arrivals.push({
        payment: url.searchParams.get('payment'),
        result: url.searchParams.get('result'),
      });
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!DOCTYPE html><title>Thank you</title><h1 id="shopReturn">Thank you</h1>');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    return new MerchantReturnPage(server, `http://127.0.0.1:${port}/shop/return`, arrivals);
  }

  /** Waits until the payer's browser shows the merchant's page for this payment. */
  async reached(page: Page, paymentId: string): Promise<void> {
    await page.waitForURL((u) => u.href.startsWith(this.url) && u.href.includes(paymentId));
    await page.locator('#shopReturn').waitFor();
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
