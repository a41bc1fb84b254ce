import { randomUUID } from 'node:crypto';
import path from 'node:path';
import type { PayerAction, PaymentEvent } from '@payments/contracts';
import { auditCardData, formatAudit } from '../../scripts/stack/card-data-audit';
import { kafkaClient, listTopics, topicEndOffsets } from '../../scripts/stack/kafka-io';
import {
  answerChallenge,
  fillHostedForm,
  fillPayoutForm,
  MerchantReturnPage,
  PayerBrowser,
  testCard,
} from '../../scripts/stack/payer-browser';
import { PaymentStack, SANDBOX_MERCHANT } from '../../scripts/stack/payment-stack';
import { DESTINATION_CARD_NUMBER, payoutForm } from '../../scripts/stack/payout-commands';
import { sleep } from '../../scripts/stack/processes';
import { type E2eStack, startE2eStack } from '../support/e2e-stack';
import { waitUntil } from '@payments/testing';

/**
 * Seed operations completed by a person in a real browser (headless Debian Chromium through
 * playwright-core), on the whole stack: sandbox, gateway-adapter, callback-ingest and the
 * orchestrator as processes on the real broker and PostgreSQL. A preauth through 3-D Secure
 * (redirect, 2.x method + challenge, 1.0.2 PaRes), then captured; a payout whose payee fills the
 * gateway's hosted form; a universal payment form the endpoint sets up to authorize. What is
 * asserted: the events, and the sandbox's ledger of money that really moved or was held.
 */
let stack: PaymentStack;
let browser: PayerBrowser;
let shop: MerchantReturnPage;
let e2e: E2eStack;
let brokers: string[];
let auditFrom: Map<string, number>;

const FINAL = ['approved', 'authorized', 'declined', 'failed'];
const UNKNOWN_ALERT_SECONDS = 15;

const typesOf = (paymentId: string) => stack.events.distinctEventsOf(paymentId).map((e) => e.type);

const finalEvent = (paymentId: string) => stack.events.finalOf(paymentId, 90_000, FINAL);

const firstAction = <K extends PayerAction['kind']>(paymentId: string, kind: K) =>
  stack.events.firstAction(paymentId, kind);

const movements = (clientOrderId: string) => stack.controls.movements(clientOrderId);

/** Captures `minor` of the hold (on the payment's own endpoint) and waits for `captured`. */
async function captureAll(
  paymentId: string,
  endpointId: string,
  minor: number,
): Promise<PaymentEvent> {
  await stack.send({ ...stack.capture(paymentId, minor), merchant: { endpointId } });
  return (await stack.events.waitFor(paymentId, (e) => e.type === 'captured', 60_000)).event;
}

const payoutEventsOf = (payoutId: string) => stack.events.distinctPayoutEventsOf(payoutId);

beforeAll(async () => {
  brokers = (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(',');
  shop = await MerchantReturnPage.start();
  e2e = await startE2eStack('forms', {
    env: {
      'callback-ingest': { MERCHANT_RETURN_URL: shop.url },
      // The unknown-outcome window shortened (one hour by default), for the lost form reply.
      orchestrator: { UNKNOWN_ALERT_SECONDS: String(UNKNOWN_ALERT_SECONDS) },
    },
  });
  stack = e2e.stack;
  const probe = kafkaClient(brokers, 'e2e-forms-audit-start');
  auditFrom = await topicEndOffsets(probe, await listTopics(probe, 'payments.'));
  browser = await PayerBrowser.launch();
});

afterAll(async () => {
  await browser?.close();
  await e2e?.stop();
  await shop?.close();
});

describe('3-D Secure preauth driven through the orchestrator, then captured', () => {
  it('redirect (1111): challenge passed in the browser → authorized (a hold) → capture → captured', async () => {
    const preauth = stack.preauth({
      endpointId: SANDBOX_MERCHANT.threeDsEndpoint,
      cvv: '321',
      amountMinor: 4_200,
    });
    await stack.send(preauth);
    const acs = (await firstAction(preauth.paymentId, 'redirect')).url;
    expect(acs).toContain('/acs/');
    expect(await movements(preauth.paymentId)).toEqual([]);
    await browser.withPage('3ds-preauth-redirect', async (page) => {
      await page.goto(acs);
      await answerChallenge(page, 'hinted-password');
      await shop.reached(page, preauth.paymentId);
    });
    expect(await finalEvent(preauth.paymentId)).toMatchObject({
      type: 'authorized',
      amount: { minor: 4_200, currency: 'USD' },
    });
    expect(await movements(preauth.paymentId)).toEqual(['authorized 4200']);
    expect(
      await captureAll(preauth.paymentId, SANDBOX_MERCHANT.threeDsEndpoint, 4_200),
    ).toMatchObject({
      amount: { minor: 4_200, currency: 'USD' },
    });
    expect(typesOf(preauth.paymentId)).toEqual([
      'operation-requested',
      'accepted-by-gateway',
      'action-required',
      'authorized',
      'operation-requested',
      'accepted-by-gateway',
      'captured',
    ]);
    expect(await movements(preauth.paymentId)).toEqual(['authorized 4200', 'captured 4200']);
  });

  it('redirect (1111): challenge failed (the payer cancels) → declined, no hold', async () => {
    const preauth = stack.preauth({ endpointId: SANDBOX_MERCHANT.threeDsEndpoint, cvv: '321' });
    await stack.send(preauth);
    const acs = (await firstAction(preauth.paymentId, 'redirect')).url;
    await browser.withPage('3ds-preauth-failed', async (page) => {
      await page.goto(acs);
      await answerChallenge(page, 'cancel');
      await shop.reached(page, preauth.paymentId);
    });
    expect(await finalEvent(preauth.paymentId)).toMatchObject({
      type: 'declined',
      operation: 'preauth',
      message: '3-D Secure authentication failed',
    });
    expect(await movements(preauth.paymentId)).toEqual([]);
  });

  it('2.x (1114): method URL in a hidden iframe, challenge, CRes handed back → authorized → captured', async () => {
    const preauth = stack.preauth({ endpointId: '1114', cvv: '321', amountMinor: 2_200 });
    await stack.send(preauth);
    const method = await firstAction(preauth.paymentId, 'threeds-method');
    await browser.withPage('3ds2-preauth', async (page) => {
      await page.setContent(
        `<iframe id="tdsMethod" style="display:none" src="${method.url}"></iframe>`,
      );
      await page.frameLocator('#tdsMethod').locator('h1').waitFor({ state: 'attached' });
      await stack.send({
        type: 'upload-method-url-result',
        commandId: randomUUID(),
        paymentId: preauth.paymentId,
        merchant: { endpointId: '1114' },
        occurredAt: new Date().toISOString(),
        threeDSCompInd: 'Y',
        threeDSServerTransID: method.threeDSServerTransID,
      });
      const acs = (await firstAction(preauth.paymentId, 'redirect')).url;
      await page.goto(acs);
      await answerChallenge(page, 'hinted-password');
      await shop.reached(page, preauth.paymentId);
    });
    expect(await finalEvent(preauth.paymentId)).toMatchObject({
      type: 'authorized',
      amount: { minor: 2_200 },
    });
    expect(await movements(preauth.paymentId)).toEqual(['authorized 2200']);
    await captureAll(preauth.paymentId, '1114', 2_200);
    expect(await movements(preauth.paymentId)).toEqual(['authorized 2200', 'captured 2200']);
  });

  it('1.0.2 (1115, html): the front end renders the form, PaRes handed back → authorized → captured', async () => {
    const preauth = stack.preauth({ endpointId: '1115', cvv: '321', amountMinor: 1_800 });
    await stack.send(preauth);
    const { html } = await firstAction(preauth.paymentId, 'html');
    await browser.withPage('3ds1-preauth', async (page) => {
      await page.setContent(html);
      await answerChallenge(page, 'hinted-password');
      await shop.reached(page, preauth.paymentId);
    });
    expect(await finalEvent(preauth.paymentId)).toMatchObject({
      type: 'authorized',
      amount: { minor: 1_800 },
    });
    await captureAll(preauth.paymentId, '1115', 1_800);
    expect(await movements(preauth.paymentId)).toEqual(['authorized 1800', 'captured 1800']);
  });
});

describe('payout form completed by the payee in the browser', () => {
  it('the gateway calls back; paid-out exactly once, the amount the ledger paid', async () => {
    const payout = payoutForm({
      amountMinor: 2_700,
      redirectUrl: `${stack.urls['callback-ingest']}/return/${SANDBOX_MERCHANT.plainEndpoint}`,
    });
    await stack.sendRaw(payout);
    const action = await stack.events.waitForPayout(
      payout.payoutId,
      ['payout-action-required'],
      60_000,
    );
    const url = (action.event as { action: { url: string } }).action.url;
    expect(await stack.controls.ledger(payout.payoutId)).toMatchObject({ entries: [] });
    await browser.withPage('payout-form', async (page) => {
      await page.goto(url);
      await fillPayoutForm(page, DESTINATION_CARD_NUMBER);
      await page.waitForURL((u) => !u.href.includes('/hpp/'));
    });
    const paid = await stack.events.waitForPayout(
      payout.payoutId,
      ['paid-out', 'payout-declined', 'payout-failed'],
      60_000,
    );
    expect(paid.event).toMatchObject({
      type: 'paid-out',
      amount: { minor: 2_700, currency: 'USD' },
    });
    // The gateway was given our callback URL and delivered the final status to it.
    const callbacks = await stack.controls.callbacks(payout.payoutId);
    expect(callbacks.attempts).toContainEqual(
      expect.objectContaining({ status: 'approved', httpStatus: 200, dropped: false }),
    );
    // Time for a late poll or a repeated callback to report it again: it must not.
    await sleep(5_000);
    const reported = payoutEventsOf(payout.payoutId).filter((e) => e.type === 'paid-out');
    expect(reported).toHaveLength(1);
    const ledger = await stack.controls.ledger(payout.payoutId);
    expect(ledger.entries.map((e) => `${e.movement} ${e.amountMinor}`)).toEqual(['paid-out 2700']);
  });

  it("the form's reply lost (its address never reached us): unknown, then the alert after the window; nothing paid", async () => {
    const payout = payoutForm({
      amountMinor: 2_900,
      redirectUrl: `${stack.urls['callback-ingest']}/return/${SANDBOX_MERCHANT.plainEndpoint}`,
    });
    // The gateway creates the order and its form, but every answer to the request is lost.
    const lost = await stack.controls.addFault({
      clientOrderId: payout.payoutId,
      operation: 'PAYOUTFORM',
      failAfter: 'drop',
    });
    try {
      const started = Date.now();
      await stack.sendRaw(payout);
      const unknown = await stack.events.waitForPayout(
        payout.payoutId,
        ['payout-outcome-unknown'],
        60_000,
      );
      expect(unknown.event).toMatchObject({ operation: 'payout-form', alert: false });
      // Status queries meanwhile say the gateway has the order ("processing"): that alone must
      // not turn it into a live payout nobody can ever complete.
      const raised = await waitUntil(
        () =>
          payoutEventsOf(payout.payoutId).find(
            (e) => e.type === 'payout-outcome-unknown' && e.alert,
          ),
        'the payout form alerted',
        { timeoutMs: (UNKNOWN_ALERT_SECONDS + 45) * 1000, everyMs: 500 },
      );
      expect(Date.now() - started).toBeGreaterThanOrEqual(UNKNOWN_ALERT_SECONDS * 1000);
      expect(raised).toMatchObject({ operation: 'payout-form', alert: true });
      expect(payoutEventsOf(payout.payoutId).map((e) => e.type)).toEqual([
        'payout-requested',
        'payout-outcome-unknown',
        'payout-outcome-unknown',
      ]);
      expect(await stack.controls.ledger(payout.payoutId)).toMatchObject({ entries: [] });
    } finally {
      await stack.controls.removeFault(lost.id);
    }
  });
});

describe('universal payment form on an endpoint set up to authorize (1118)', () => {
  it('the payer completes it → authorized (not approved) → capture → captured; ledger hold then capture', async () => {
    const form = stack.hostedForm('payment-form', {
      endpointId: SANDBOX_MERCHANT.paymentFormPreauthEndpoint,
      amountMinor: 1_250,
    });
    await stack.send(form);
    const formUrl = (await firstAction(form.paymentId, 'redirect')).url;
    await browser.withPage('payment-form-authorizes', async (page) => {
      await page.goto(formUrl);
      await fillHostedForm(page, testCard('123'));
      await shop.reached(page, form.paymentId);
    });
    expect(await finalEvent(form.paymentId)).toMatchObject({
      type: 'authorized',
      amount: { minor: 1_250, currency: 'USD' },
    });
    expect(typesOf(form.paymentId)).not.toContain('approved');
    expect(await movements(form.paymentId)).toEqual(['authorized 1250']);
    expect(
      await captureAll(form.paymentId, SANDBOX_MERCHANT.paymentFormPreauthEndpoint, 1_000),
    ).toMatchObject({
      amount: { minor: 1_000 },
      released: { minor: 250 },
    });
    expect(await movements(form.paymentId)).toEqual([
      'authorized 1250',
      'captured 1000',
      'released 250',
    ]);
  });
});

describe('card data', () => {
  it("neither the payer's nor the payee's card appears in a log line, database row or message", async () => {
    const audit = await auditCardData({
      logDirs: [path.join(stack.workDir, 'logs')],
      databaseUrls: [e2e.orchestratorDb.url, e2e.adapterDb.url],
      kafka: kafkaClient(brokers, 'e2e-forms-audit'),
      topicOffsets: auditFrom,
      deliberateCommandKeys: new Set(),
      secrets: [SANDBOX_MERCHANT.controlKey],
    });
    process.stdout.write(`${formatAudit(audit)}\n`);
    expect(audit.findings).toEqual([]);
    expect(audit.messages).toBeGreaterThan(20);
  });
});
