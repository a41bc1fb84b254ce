import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { PayerAction } from '@payments/contracts';
import { auditCardData, formatAudit } from '../../scripts/stack/card-data-audit';
import { kafkaClient, listTopics, topicEndOffsets } from '../../scripts/stack/kafka-io';
import {
  answerChallenge,
  fillHostedForm,
  MerchantReturnPage,
  PayerBrowser,
  testCard,
} from '../../scripts/stack/payer-browser';
import {
  PaymentStack,
  SANDBOX_MERCHANT,
  TEST_CARD_NUMBER,
} from '../../scripts/stack/payment-stack';
import { sleep } from '../../scripts/stack/processes';
import { controlFor } from '../support/callback-control';
import { type E2eStack, startE2eStack } from '../support/e2e-stack';

/**
 * 3-D Secure and hosted forms end to end with the payer in a real browser: the gateway sandbox, gateway-adapter,
 * callback-ingest and the orchestrator as separate processes on the real broker and PostgreSQL;
 * headless Chromium (playwright-core) is the payer: it follows `action-required`, answers the
 * ACS challenge, types the card on the hosted page and comes back through callback-ingest's
 * return endpoint to the merchant's page. What is asserted: the event stream, the sandbox's
 * ledger of money that really moved, and that the browser return alone never decided anything.
 * One stack and one browser for the file, a page per test; a failing step leaves a screenshot
 * in .run/browser-screenshots/.
 */
let stack: PaymentStack;
let browser: PayerBrowser;
let shop: MerchantReturnPage;
let e2e: E2eStack;
let brokers: string[];
let auditFrom: Map<string, number>;

const FINAL = ['approved', 'authorized', 'declined', 'failed', 'account-verified'];

const eventsOf = (paymentId: string) => stack.events.distinctEventsOf(paymentId);

const typesOf = (paymentId: string) => eventsOf(paymentId).map((e) => e.type);

const finalEvent = (paymentId: string) => stack.events.finalOf(paymentId, 90_000, FINAL);

const firstAction = <K extends PayerAction['kind']>(paymentId: string, kind: K) =>
  stack.events.firstAction(paymentId, kind);

/** The URL of the payment's first redirect action: the ACS or the hosted form. */
async function actionUrl(paymentId: string): Promise<string> {
  return (await firstAction(paymentId, 'redirect')).url;
}

/** The payer types the card on the hosted form the payment announced, and lands on the shop. */
async function payOnForm(name: string, paymentId: string, cvv: string): Promise<void> {
  const formUrl = await actionUrl(paymentId);
  expect(formUrl).toContain('/hpp/');
  await browser.withPage(name, async (page) => {
    await page.goto(formUrl);
    await fillHostedForm(page, testCard(cvv));
    await shop.reached(page, paymentId);
  });
}

const movements = (clientOrderId: string) => stack.controls.movements(clientOrderId);

beforeAll(async () => {
  brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  shop = await MerchantReturnPage.start();
  e2e = await startE2eStack('browser', {
    env: { 'callback-ingest': { MERCHANT_RETURN_URL: shop.url } },
  });
  stack = e2e.stack;
  const probe = kafkaClient(brokers, 'e2e-browser-audit-start');
  auditFrom = await topicEndOffsets(probe, await listTopics(probe, 'payments.'));
  browser = await PayerBrowser.launch();
});

afterAll(async () => {
  await browser?.close();
  await e2e?.stop();
  await shop?.close();
});

describe('3-D Secure sale (endpoint 1111: the gateway announces the ACS with redirect-to)', () => {
  const threeDs = { endpointId: SANDBOX_MERCHANT.threeDsEndpoint };

  it('challenge passed → approved, charged once; the payer ends on the merchant page', async () => {
    const sale = stack.sale({ ...threeDs, cvv: '321', amountMinor: 4_200 });
    await stack.send(sale);
    const acs = await actionUrl(sale.paymentId);
    expect(acs).toContain('/acs/');
    // Nothing is decided while the payer is at the ACS.
    expect(typesOf(sale.paymentId)).not.toContain('approved');
    await browser.withPage('3ds-passed', async (page) => {
      await page.goto(acs);
      await answerChallenge(page, 'hinted-password');
      await shop.reached(page, sale.paymentId);
    });
    const final = await finalEvent(sale.paymentId);
    expect(final).toMatchObject({ type: 'approved', amount: { minor: 4_200, currency: 'USD' } });
    expect(typesOf(sale.paymentId)).toEqual([
      'operation-requested',
      'accepted-by-gateway',
      'action-required',
      'approved',
    ]);
    expect(await movements(sale.paymentId)).toEqual(['charged 4200']);
    expect(shop.arrivals).toContainEqual({ payment: sale.paymentId, result: null });
  });

  it('challenge failed (the payer cancels) → declined, nothing charged', async () => {
    const sale = stack.sale({ ...threeDs, cvv: '321' });
    await stack.send(sale);
    const acs = await actionUrl(sale.paymentId);
    await browser.withPage('3ds-failed', async (page) => {
      await page.goto(acs);
      await answerChallenge(page, 'cancel');
      await shop.reached(page, sale.paymentId);
    });
    expect(await finalEvent(sale.paymentId)).toMatchObject({
      type: 'declined',
      operation: 'sale',
      message: '3-D Secure authentication failed',
    });
    expect(await movements(sale.paymentId)).toEqual([]);
  });

  it('a verified browser return saying approved while the payer is at the ACS decides nothing', async () => {
    const sale = stack.sale({ ...threeDs, cvv: '321', amountMinor: 3_300 });
    await stack.send(sale);
    const acs = await actionUrl(sale.paymentId);
    const accepted = eventsOf(sale.paymentId).find((e) => e.type === 'accepted-by-gateway');
    const orderid = accepted?.type === 'accepted-by-gateway' ? (accepted.gatewayOrderId ?? '') : '';
    // A genuine control for "approved" (as if replayed from another order's return): the return
    // verifies, is published as a browser-return, and must only bring a status query forward.
    const forged = await fetch(`${stack.urls['callback-ingest']}/return/${threeDs.endpointId}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        status: 'approved',
        orderid,
        merchant_order: sale.paymentId,
        client_orderid: sale.paymentId,
        // Not covered by the control: a return naming the sale must still be only a hint.
        type: 'sale',
        control: controlFor('approved', orderid, sale.paymentId, SANDBOX_MERCHANT.controlKey),
      }).toString(),
    });
    expect(forged.status).toBe(303);
    expect(forged.headers.get('location')).not.toContain('unverified');
    await browser.withPage('3ds-return-is-a-hint', async (page) => {
      await page.goto(acs);
      await page.locator('#acsForm').waitFor();
      // Time for the return to be consumed and the status query it brought forward to come
      // back ("processing"); taken as the truth, it would have approved at once.
      await sleep(6_000);
      const view = await stack.payment(sale.paymentId);
      expect(view.body).toMatchObject({ status: 'action-required' });
      expect(typesOf(sale.paymentId)).not.toContain('approved');
      await answerChallenge(page, 'cancel');
      await shop.reached(page, sale.paymentId);
    });
    expect(await finalEvent(sale.paymentId)).toMatchObject({ type: 'declined' });
    expect(await movements(sale.paymentId)).toEqual([]);
  });

  it('frictionless (cvv 111) → approved with no action for the payer', async () => {
    const sale = stack.sale({ ...threeDs, cvv: '111', amountMinor: 1_500 });
    await stack.send(sale);
    expect(await finalEvent(sale.paymentId)).toMatchObject({ type: 'approved' });
    expect(typesOf(sale.paymentId)).not.toContain('action-required');
    expect(await movements(sale.paymentId)).toEqual(['charged 1500']);
  });

  it('the payer abandons the ACS page → resolved by polling once the ACS gives up (declined)', async () => {
    const sale = stack.sale({ ...threeDs, cvv: '321' });
    // Every callback attempt for this order is lost: only the status query can tell.
    const drop = await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      callbacks: 'drop',
    });
    try {
      await stack.send(sale);
      const acs = await actionUrl(sale.paymentId);
      await browser.withPage('3ds-abandoned', async (page) => {
        await page.goto(acs);
        await page.locator('#acsForm').waitFor();
        // …and the payer closes the tab.
      });
      // Still processing: the orchestrator keeps polling and does not guess.
      const view = await stack.payment(sale.paymentId);
      expect(view.body).toMatchObject({ status: 'action-required' });
      await stack.controls.advanceClock(601); // past the ACS's 10-minute challenge window
      expect(await finalEvent(sale.paymentId)).toMatchObject({
        type: 'declined',
        message: '3-D Secure not completed in time',
      });
      const callbacks = await stack.controls.callbacks(sale.paymentId);
      expect(callbacks.attempts.length).toBeGreaterThan(0);
      expect(callbacks.attempts.every((a) => a.dropped)).toBe(true);
      expect(await movements(sale.paymentId)).toEqual([]);
    } finally {
      await stack.controls.removeFault(drop.id);
    }
  });
});

describe('own 3-D Secure: the front end uploads, callback-ingest hands the ACS answer back', () => {
  it('2.x (endpoint 1114): method step in a hidden iframe, result Y, challenge, CRes handed back → approved', async () => {
    const sale = stack.sale({ endpointId: '1114', cvv: '321', amountMinor: 2_200 });
    await stack.send(sale);
    const method = await firstAction(sale.paymentId, 'threeds-method');
    await browser.withPage('3ds2-own', async (page) => {
      // The merchant's checkout: the method URL in a hidden iframe, then the result uploaded.
      await page.setContent(
        `<iframe id="tdsMethod" style="display:none" src="${method.url}"></iframe>`,
      );
      await page.frameLocator('#tdsMethod').locator('h1').waitFor({ state: 'attached' });
      await stack.send({
        type: 'upload-method-url-result',
        commandId: randomUUID(),
        paymentId: sale.paymentId,
        merchant: { endpointId: '1114' },
        occurredAt: new Date().toISOString(),
        threeDSCompInd: 'Y',
        threeDSServerTransID: method.threeDSServerTransID,
      });
      const acs = await actionUrl(sale.paymentId);
      await page.goto(acs);
      await answerChallenge(page, 'hinted-password');
      // The ACS posts the CRes to our return endpoint; callback-ingest passes it on as a command.
      await shop.reached(page, sale.paymentId);
    });
    expect(await finalEvent(sale.paymentId)).toMatchObject({ type: 'approved' });
    expect(typesOf(sale.paymentId)).toEqual([
      'operation-requested',
      'accepted-by-gateway',
      'action-required',
      'action-required',
      'approved',
    ]);
    expect(await movements(sale.paymentId)).toEqual(['charged 2200']);
  });

  it('1.0.2 (endpoint 1115, html): the front end renders the form, PaRes handed back → approved', async () => {
    const sale = stack.sale({ endpointId: '1115', cvv: '321', amountMinor: 1_800 });
    await stack.send(sale);
    const { html } = await firstAction(sale.paymentId, 'html');
    await browser.withPage('3ds1-own', async (page) => {
      // What a merchant's checkout does with `html`: render it; it posts itself to the ACS.
      await page.setContent(html);
      await answerChallenge(page, 'hinted-password');
      await shop.reached(page, sale.paymentId);
    });
    expect(await finalEvent(sale.paymentId)).toMatchObject({ type: 'approved' });
    expect(await movements(sale.paymentId)).toEqual(['charged 1800']);
  });
});

describe('hosted forms (endpoint 1113): the card is typed on the gateway page, never sent to us', () => {
  it('sale-form filled in the browser → approved, charged once', async () => {
    const form = stack.hostedForm('sale-form', { amountMinor: 3_100 });
    await stack.send(form);
    await payOnForm('sale-form', form.paymentId, '123');
    const final = await finalEvent(form.paymentId);
    expect(final).toMatchObject({
      type: 'approved',
      amount: { minor: 3_100, currency: 'USD' },
    });
    expect(eventsOf(form.paymentId)[0]).toMatchObject({ via: 'hosted-form', operation: 'sale' });
    expect(await movements(form.paymentId)).toEqual(['charged 3100']);
  });

  it('sale-form on a 3-D Secure endpoint (1111, cvv 321): the form leads to the ACS → approved', async () => {
    const form = stack.hostedForm('sale-form', {
      endpointId: SANDBOX_MERCHANT.threeDsEndpoint,
      amountMinor: 2_700,
    });
    await stack.send(form);
    const formUrl = await actionUrl(form.paymentId);
    await browser.withPage('sale-form-3ds', async (page) => {
      await page.goto(formUrl);
      await fillHostedForm(page, testCard('321'));
      await answerChallenge(page, 'hinted-password');
      await shop.reached(page, form.paymentId);
    });
    expect(await finalEvent(form.paymentId)).toMatchObject({ type: 'approved' });
    expect(await movements(form.paymentId)).toEqual(['charged 2700']);
  });

  it('payment-form (the universal form) → approved', async () => {
    const form = stack.hostedForm('payment-form', { amountMinor: 1_250 });
    await stack.send(form);
    await payOnForm('payment-form', form.paymentId, '123');
    expect(await finalEvent(form.paymentId)).toMatchObject({ type: 'approved' });
    expect(await movements(form.paymentId)).toEqual(['charged 1250']);
  });

  it('a hosted form declined on the gateway page (cvv 116) → declined, nothing charged', async () => {
    const form = stack.hostedForm('sale-form');
    await stack.send(form);
    await payOnForm('sale-form-declined', form.paymentId, '116');
    expect(await finalEvent(form.paymentId)).toMatchObject({ type: 'declined' });
    expect(await movements(form.paymentId)).toEqual([]);
  });

  it('account-verification-form → account-verified, nothing charged', async () => {
    const form = stack.accountVerificationForm();
    await stack.send(form);
    await payOnForm('account-verification-form', form.paymentId, '123');
    expect(await finalEvent(form.paymentId)).toMatchObject({
      type: 'account-verified',
      card: { lastFour: TEST_CARD_NUMBER.slice(-4) },
    });
    expect(await movements(form.paymentId)).toEqual([]);
  });

  it('preauth-form → authorized → capture → captured', async () => {
    const form = stack.hostedForm('preauth-form', { amountMinor: 5_000 });
    await stack.send(form);
    await payOnForm('preauth-form', form.paymentId, '123');
    expect(await finalEvent(form.paymentId)).toMatchObject({ type: 'authorized' });
    await stack.send(stack.capture(form.paymentId, 4_000));
    const captured = await stack.events.waitFor(
      form.paymentId,
      (e) => e.type === 'captured',
      60_000,
    );
    expect(captured.event).toMatchObject({
      amount: { minor: 4_000 },
      released: { minor: 1_000 },
    });
    expect(await movements(form.paymentId)).toEqual([
      'authorized 5000',
      'captured 4000',
      'released 1000',
    ]);
  });
});

describe('account verification, direct', () => {
  it('with the sealed card → account-verified, nothing charged', async () => {
    const verification = stack.accountVerification();
    await stack.send(verification);
    expect(await finalEvent(verification.paymentId)).toMatchObject({ type: 'account-verified' });
    expect(await movements(verification.paymentId)).toEqual([]);
  });
});

describe('card data', () => {
  it('appears in no log line, no database row and no message of this suite', async () => {
    const audit = await auditCardData({
      logDirs: [path.join(stack.workDir, 'logs')],
      databaseUrls: [e2e.orchestratorDb.url, e2e.adapterDb.url],
      kafka: kafkaClient(brokers, 'e2e-browser-audit'),
      topicOffsets: auditFrom,
      deliberateCommandKeys: new Set(),
      secrets: [SANDBOX_MERCHANT.controlKey],
    });
    process.stdout.write(`${formatAudit(audit)}\n`);
    expect(audit.findings).toEqual([]);
    expect(audit.messages).toBeGreaterThan(20);
  });
});
