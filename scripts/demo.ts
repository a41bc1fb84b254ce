/**
 * `npm run demo`: the main job on embedded defaults. Builds the apps, starts a local Kafka broker
 * (or uses KAFKA_BROKERS), creates two demo databases on the local PostgreSQL (or DATABASE_URL's
 * server), starts the gateway sandbox and the three apps as separate processes, sends a scripted
 * set of payment commands, prints the authoritative event stream as it arrives and a summary,
 * and stops everything it started. The operators' console runs beside them: its address and a
 * viewer's and an operator's token are printed first, so its Watch page can show the demo's
 * events as they happen; `npm run demo -- --keep-running` leaves everything up after the summary
 * (until Ctrl-C) to look around.
 *
 * `npm run demo -- --ha`: the same on a replicated PostgreSQL (deploy/local/postgres-ha/pg-ha.sh:
 * a pg_auto_failover monitor, a primary and a synchronous standby, installed with apt-get when
 * missing, as root), started around the demo by scripts/with-pg-ha.sh and always stopped and
 * wiped afterwards; the apps connect with the multi-host URL (target_session_attrs=read-write).
 * After the scenarios a failover while payments flow: sales sent steadily, the primary node
 * killed mid-stream (SIGKILL of its keeper and postmaster), the monitor promotes the standby;
 * printed: the time without a writable primary, the apps' readiness meanwhile, the first sale
 * completed after the kill, every sale final and charged once (the sandbox in charge-again mode,
 * so a second send would show in its ledger), and the old primary rejoining as the standby.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { PaymentEvent } from '@payments/contracts';
import { ensureBroker, freshDatabase } from './stack/infra';
import { haUrl, pgHa, waitForWritablePrimary, WITH_PG_HA_SH } from './stack/pg-ha';
import {
  answerChallenge,
  chromiumInstalled,
  fillPayoutForm,
  MerchantReturnPage,
  PayerBrowser,
} from './stack/payer-browser';
import { PaymentStack, SANDBOX_MERCHANT } from './stack/payment-stack';
import {
  approvePayout,
  DESTINATION_CARD_NUMBER,
  payoutCheck,
  payoutForm,
} from './stack/payout-commands';
import { buildApps, REPO_ROOT, run } from './stack/processes';
import { eventSagaId, ReceivedEvent, ReceivedPayoutEvent } from './stack/kafka-io';

/** `--ha`: on the replicated PostgreSQL, with a failover while payments flow (see above). */
const HA = process.argv.includes('--ha');
const SERVER_URL = HA
  ? (process.env.DATABASE_HA_URL ?? '')
  : (process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');

interface Scenario {
  readonly name: string;
  readonly paymentId: string;
  readonly done: (events: ReadonlyArray<{ type: string }>) => boolean;
  /** The payment's (or payout's) events so far. */
  readonly events: () => ReadonlyArray<{ type: string }>;
}

/** `--keep-running`: leave the stack and the console up after the summary, until Ctrl-C. */
const KEEP_RUNNING = process.argv.includes('--keep-running');

/** Where the console is and the two tokens to sign in with (made up for this run only). */
function printConsole(stack: PaymentStack): void {
  const running = stack.console;
  if (running === undefined) return;
  process.stdout.write(
    `\n== the operators' console: ${running.url}  (Watch: ${running.url}/watch; log: ${running.app.spec.logFile ?? ''})\n`,
  );
  if (running.tokens) {
    process.stdout.write(`   viewer token    ${running.tokens.viewer}\n`);
    process.stdout.write(`   operator token  ${running.tokens.operator}\n`);
  }
}

const labels = new Map<string, string>();
const startedAt = Date.now();

function money(minor: number, currency: string): string {
  const digits = String(minor).padStart(3, '0');
  return `${digits.slice(0, -2)}.${digits.slice(-2)} ${currency}`;
}

function describe(event: PaymentEvent | ReceivedPayoutEvent['event']): string {
  const e = event as Record<string, unknown>;
  const amount = e.amount as { minor: number; currency: string } | undefined;
  const parts: string[] = [event.type];
  if (amount) parts.push(money(amount.minor, amount.currency));
  if (typeof e.reason === 'string') parts.push(`reason=${e.reason}`);
  if (typeof e.code === 'string') parts.push(`code=${e.code}`);
  if (typeof e.message === 'string') parts.push(`"${e.message}"`);
  if (typeof e.approvedBy === 'string') parts.push(`by ${e.approvedBy}`);
  if (typeof e.approvalDeadline === 'string' && event.type === 'payout-registered')
    parts.push(`approve by ${e.approvalDeadline}`);
  const card = e.card as { brand?: string; bin?: string; lastFour?: string } | undefined;
  if (card?.lastFour) parts.push(`${card.brand ?? 'card'} ${card.bin ?? ''}…${card.lastFour}`);
  return parts.join('  ');
}

const printed = new Set<string>();

function printEvent(received: ReceivedEvent | ReceivedPayoutEvent): void {
  // A broker given by KAFKA_BROKERS may hold events of earlier runs: show only this run's payments.
  const e = received.event;
  const id = eventSagaId(e);
  const label = labels.get(id);
  if (label === undefined) return;
  // Delivery is at least once: an event redelivered under the same ce_id is shown once.
  if (printed.has(received.ceId)) return;
  printed.add(received.ceId);
  const t = ((received.receivedAt - startedAt) / 1000).toFixed(1).padStart(6);
  process.stdout.write(
    `  ${t}s  ${label.padEnd(28)} v${String(received.event.version).padEnd(3)} ${describe(received.event)}\n`,
  );
}

/**
 * The 3-D Secure part needs the headless browser: installed by the same script the tests use
 * (apt-get, as root) when it is missing; if that cannot be done the part is skipped, saying so.
 */
async function prepareBrowser(): Promise<boolean> {
  if (chromiumInstalled()) return true;
  process.stdout.write('== chromium missing: installing it with scripts/ensure-test-tools.sh\n');
  try {
    await run('bash', ['scripts/ensure-test-tools.sh']);
  } catch (error) {
    process.stdout.write(`   could not install chromium (${(error as Error).message})\n`);
  }
  return chromiumInstalled();
}

/** The payer of the 3-D Secure sale: follows action-required to the ACS and passes the challenge. */
async function payThroughAcs(
  s: PaymentStack,
  paymentId: string,
  shop: MerchantReturnPage,
): Promise<void> {
  const received = await s.events.waitForType(paymentId, ['action-required'], 60_000);
  const event = received.event;
  if (event.type !== 'action-required' || event.action.kind !== 'redirect') return;
  const acsUrl = event.action.url;
  const browser = await PayerBrowser.launch();
  try {
    await browser.withPage('demo-3ds', async (page) => {
      await page.goto(acsUrl);
      const t = ((Date.now() - startedAt) / 1000).toFixed(1).padStart(6);
      process.stdout.write(
        `  ${t}s  ${'  (payer: headless chromium)'.padEnd(28)}      on the ACS page "${await page.title()}", types the password\n`,
      );
      await answerChallenge(page, 'hinted-password');
      await shop.reached(page, paymentId);
      const t2 = ((Date.now() - startedAt) / 1000).toFixed(1).padStart(6);
      process.stdout.write(
        `  ${t2}s  ${'  (payer: headless chromium)'.padEnd(28)}      back on the merchant page via callback-ingest /return\n`,
      );
    });
  } finally {
    await browser.close();
  }
}

/** The payee of the payout form: follows payout-action-required to the form and fills it in. */
async function payeeFillsPayoutForm(s: PaymentStack, payoutId: string): Promise<void> {
  const received = await s.events.waitForPayout(payoutId, ['payout-action-required'], 60_000);
  const action = (received.event as { action?: { kind: string; url?: string } }).action;
  if (action?.kind !== 'redirect' || action.url === undefined) return;
  const formUrl = action.url;
  const browser = await PayerBrowser.launch();
  try {
    await browser.withPage('demo-payout-form', async (page) => {
      await page.goto(formUrl);
      const t = ((Date.now() - startedAt) / 1000).toFixed(1).padStart(6);
      process.stdout.write(
        `  ${t}s  ${'  (payee: headless chromium)'.padEnd(28)}      on the payout form "${await page.title()}", types the card\n`,
      );
      await fillPayoutForm(page, DESTINATION_CARD_NUMBER);
      await page.waitForURL((u) => !u.href.includes('/hpp/'));
    });
  } finally {
    await browser.close();
  }
}

/**
 * `--ha` outside scripts/with-pg-ha.sh: runs this demo again inside it (it starts the replicated
 * PostgreSQL, exports DATABASE_HA_URL and PG_HA_PORT, and stops and wipes it afterwards, also on
 * failure or Ctrl-C); resolves with the demo's exit code.
 */
function runInsidePgHa(): Promise<number> {
  process.stdout.write(
    '== starting a replicated PostgreSQL (pg_auto_failover: monitor, primary, synchronous standby) with scripts/with-pg-ha.sh\n',
  );
  const tsx = path.join(REPO_ROOT, 'node_modules/.bin/tsx');
  const child = spawn('bash', [WITH_PG_HA_SH, tsx, __filename, ...process.argv.slice(2)], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
  // Ctrl-C reaches the whole process group; this process only waits for the child's end.
  process.on('SIGINT', () => undefined);
  return new Promise((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
}

async function main(): Promise<void> {
  if (HA && !process.env.DATABASE_HA_URL) {
    process.exitCode = await runInsidePgHa();
    return;
  }
  process.stdout.write('== building the apps\n');
  await buildApps();
  const browserReady = await prepareBrowser();
  const shop = await MerchantReturnPage.start();
  process.stdout.write('== starting the Kafka broker\n');
  const broker = await ensureBroker(process.env);
  let stack: PaymentStack | undefined;
  try {
    process.stdout.write('== creating the demo databases\n');
    const orchestratorDb = await freshDatabase(SERVER_URL, 'payments_demo');
    const adapterDb = await freshDatabase(SERVER_URL, 'payments_demo_adapter');
    process.stdout.write(
      '== starting gateway-sandbox, gateway-adapter, callback-ingest, orchestrator\n',
    );
    stack = await PaymentStack.start(
      {
        kafkaBrokers: broker.brokers,
        orchestratorDatabaseUrl: orchestratorDb,
        adapterDatabaseUrl: adapterDb,
        logLevel: 'warn',
        env: {
          // The schedule section moves the orchestrator's clock (never in production).
          orchestrator: { TEST_CONTROLS_ENABLED: 'true', TIMER_POLL_MS: '100' },
          'callback-ingest': { MERCHANT_RETURN_URL: shop.url },
        },
        console: true,
      },
      printEvent,
    );
    for (const [app, url] of Object.entries(stack.urls)) {
      process.stdout.write(
        `   ${app.padEnd(16)} ${url}  (log: ${stack.apps[app as keyof typeof stack.urls].logFile})\n`,
      );
    }
    printConsole(stack);
    const s = stack;
    const scenarios: Scenario[] = [];
    const add = (name: string, paymentId: string, finalTypes: string[], payout = false) => {
      labels.set(paymentId, name);
      scenarios.push({
        name,
        paymentId,
        done: (events) => events.some((e) => finalTypes.includes(e.type)),
        events: () =>
          (payout ? s.events.payoutEventsOf(paymentId) : s.events.eventsOf(paymentId)).map(
            (r) => r.event,
          ),
      });
    };
    // Payout events are printed as they are found (the collector's callback carries payments).
    const printedPayouts = new Map<string, number>();
    const printPayouts = setInterval(() => {
      for (const sc of scenarios) {
        const received = s.events.payoutEventsOf(sc.paymentId);
        for (const r of received.slice(printedPayouts.get(sc.paymentId) ?? 0)) printEvent(r);
        printedPayouts.set(sc.paymentId, received.length);
      }
    }, 100);

    process.stdout.write('\n== sending commands; events from payments.events.v1 as they arrive:\n');
    process.stdout.write(`  ${'time'.padStart(7)}  ${'payment'.padEnd(28)} ver  event\n`);
    const approved = s.sale({ cvv: '123', amountMinor: 2_500 });
    add('sale approved (cvv 123)', approved.paymentId, ['approved']);
    const declined = s.sale({ cvv: '116', amountMinor: 4_200 });
    add('sale declined (cvv 116)', declined.paymentId, ['declined']);
    const lost = s.sale({ cvv: '123', amountMinor: 9_900 });
    add('sale, reply lost → polled', lost.paymentId, ['approved']);
    await s.controls.addFault({
      clientOrderId: lost.paymentId,
      operation: 'SALE',
      failAfter: 'drop',
      times: 1,
    });
    // ... and its callback too, so only the orchestrator's status polling can resolve it.
    await s.controls.addFault({ clientOrderId: lost.paymentId, callbacks: 'drop' });
    const preauth = s.preauth({ cvv: '123', amountMinor: 10_000 });
    add('preauth → capture → return', preauth.paymentId, ['returned']);
    // A two-step payout: payout-check registers it, finance approves it, payout-pay pays it.
    const payout = payoutCheck({ amountMinor: 15_000 });
    add('two-step payout, approved', payout.payoutId, ['paid-out', 'payout-declined'], true);
    await s.send(approved, declined, lost, preauth);
    await s.sendRaw(payout);
    let payer: Promise<void> = Promise.resolve();
    if (browserReady) {
      const threeDs = s.sale({
        endpointId: SANDBOX_MERCHANT.threeDsEndpoint,
        cvv: '321',
        amountMinor: 4_900,
      });
      add('3-D Secure sale, ACS passed', threeDs.paymentId, ['approved']);
      // A 3-D Secure preauth: the payer passes the challenge, the authorization is captured.
      const threeDsPreauth = s.preauth({
        endpointId: SANDBOX_MERCHANT.threeDsEndpoint,
        cvv: '321',
        amountMinor: 5_500,
      });
      add('3-D Secure preauth → capture', threeDsPreauth.paymentId, ['captured']);
      // A payout form: the payee types the destination card on the gateway's page.
      const form = payoutForm({
        amountMinor: 3_300,
        redirectUrl: `${s.urls['callback-ingest']}/return/${SANDBOX_MERCHANT.plainEndpoint}`,
      });
      add('payout form, payee fills it', form.payoutId, ['paid-out', 'payout-declined'], true);
      await s.send(threeDs, threeDsPreauth);
      await s.sendRaw(form);
      payer = (async () => {
        await payThroughAcs(s, threeDs.paymentId, shop);
        await payThroughAcs(s, threeDsPreauth.paymentId, shop);
        await s.events.waitForType(threeDsPreauth.paymentId, ['authorized'], 90_000);
        await s.send({
          ...s.capture(threeDsPreauth.paymentId, 5_500),
          merchant: { endpointId: SANDBOX_MERCHANT.threeDsEndpoint },
        });
        await payeeFillsPayoutForm(s, form.payoutId);
      })();
    } else {
      process.stdout.write(
        '   (3-D Secure part skipped: /usr/bin/chromium is missing and could not be installed; run scripts/ensure-test-tools.sh as root)\n',
      );
    }

    const payoutSteps = (async () => {
      await s.events.waitForPayout(payout.payoutId, ['payout-registered'], 90_000);
      await s.sendRaw(
        approvePayout(payout.payoutId, SANDBOX_MERCHANT.plainEndpoint, 'finance@example.com'),
      );
    })();
    await s.events.waitForType(preauth.paymentId, ['authorized'], 90_000);
    await s.send(s.capture(preauth.paymentId, 7_000));
    await s.events.waitForType(preauth.paymentId, ['captured'], 90_000);
    await s.send(s.return(preauth.paymentId, 2_000));
    await payer;
    await payoutSteps;

    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      if (scenarios.every((sc) => sc.done(sc.events()))) break;
      await new Promise((r) => setTimeout(r, 250));
    }

    await new Promise((r) => setTimeout(r, 150));
    clearInterval(printPayouts);
    process.stdout.write('\n== summary\n');
    process.stdout.write(
      `  ${'scenario'.padEnd(28)} ${'last event'.padEnd(18)} ${'events'.padEnd(7)} gateway ledger (minor units)\n`,
    );
    let allDone = true;
    for (const sc of scenarios) {
      const events = sc.events();
      const ledger = await s.controls.ledger(sc.paymentId);
      const last = events.at(-1)?.type ?? '(none)';
      allDone &&= sc.done(events);
      process.stdout.write(
        `  ${sc.name.padEnd(28)} ${last.padEnd(18)} ${String(events.length).padEnd(7)} ${JSON.stringify(ledger.totals)}\n`,
      );
    }
    allDone &&= await scheduleSection(s, approved.paymentId, approved.merchant.endpointId);
    if (HA) allDone &&= await failoverSection(s);
    process.stdout.write(
      allDone
        ? '\nAll scenarios reached their final outcome.\n'
        : '\nSome scenarios did not finish in time; see the logs above.\n',
    );
    process.exitCode = allDone ? 0 : 1;
    if (KEEP_RUNNING) {
      printConsole(s);
      process.stdout.write('   everything keeps running; Ctrl-C stops it\n');
      await new Promise<void>((resolve) => process.once('SIGINT', () => resolve()));
    }
  } finally {
    process.stdout.write('== stopping everything\n');
    await stack?.stop();
    await broker.stop();
    await shop.close();
  }
}

/**
 * A card reference taken from the approved sale, a monthly schedule of three cycles on it, and the
 * orchestrator's clock moved a month at a time: each cycle is a rebill payment of its
 * own, charged once in the sandbox's ledger. Then the clock goes back to the real time.
 */
async function scheduleSection(
  s: PaymentStack,
  salePaymentId: string,
  endpointId: string,
): Promise<boolean> {
  process.stdout.write(
    '\n== a monthly schedule (3 cycles) on a card reference of the approved sale; the orchestrator clock moved a month at a time\n',
  );
  const common = () => ({
    commandId: randomUUID(),
    merchant: { endpointId },
    occurredAt: new Date().toISOString(),
  });
  await s.sendRaw({ type: 'create-card-ref', ...common(), paymentId: salePaymentId });
  const ref = await s.events.waitForType(
    salePaymentId,
    ['card-ref-created', 'card-reference-failed'],
    30_000,
  );
  if (ref.event.type !== 'card-ref-created') return false;
  process.stdout.write(`  card reference ${ref.event.cardRef.refId}: ${describe(ref.event)}\n`);
  const scheduleId = randomUUID();
  const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  await s.sendRaw({
    type: 'create-schedule',
    ...common(),
    scheduleId,
    cardRef: ref.event.cardRef,
    amount: { minor: 990, currency: 'USD' },
    description: 'Demo monthly plan',
    rule: {
      period: 'month',
      interval: 1,
      startDate: tomorrow,
      timeOfDay: '12:00',
      timeZone: 'UTC',
      end: { kind: 'count', count: 3 },
    },
  });
  await s.events.waitForSchedule(scheduleId, (e) => e.type === 'schedule-created', 30_000);
  for (const [cycle, days] of [
    [0, 2],
    [1, 31],
    [2, 31],
  ] as const) {
    await s.advanceOrchestratorClock(days * 86_400);
    const charged = await s.events.waitForSchedule(
      scheduleId,
      (e) => e.type === 'cycle-charged' && e.cycle === cycle,
      30_000,
    );
    if (charged.type !== 'cycle-charged') return false;
    const ledger = await s.controls.ledger(charged.paymentId);
    process.stdout.write(
      `  clock +${String(days).padStart(2)} days  cycle ${cycle}  charged ${money(charged.amount.minor, charged.amount.currency)}  rebill ${charged.paymentId.slice(0, 8)}…  ledger ${JSON.stringify(ledger.totals)}\n`,
    );
  }
  await s.events.waitForSchedule(scheduleId, (e) => e.type === 'schedule-completed', 30_000);
  const types = s.events.scheduleEventsOf(scheduleId).map((e) => e.type);
  process.stdout.write(`  schedule events: ${types.join(', ')}\n`);
  // The clock back to the real time: what follows (and the console with --keep-running) is
  // stamped with today, so "unknown for over an hour" and the Watch chart read true.
  await s.resetOrchestratorClock();
  process.stdout.write('  clock back to the real time\n');
  return true;
}

/** How many sales the failover section sends, the pause between two, and after which one the kill. */
const FAILOVER_SALES = 30;
const FAILOVER_SALE_GAP_MS = 150;
const FAILOVER_KILL_AFTER = 10;
const FINAL_TYPES = ['approved', 'declined', 'failed'];

/**
 * `--ha`: sales sent steadily while the primary node is killed; the monitor promotes the standby
 * and the apps follow (docs/design.md, "Database failover"). Prints the recovery figures and
 * checks every sale final and sent once; then the old primary rejoins as the standby.
 */
async function failoverSection(s: PaymentStack): Promise<boolean> {
  const url = haUrl();
  const oldPrimary = await pgHa('primary');
  process.stdout.write(
    `\n== a failover while payments flow: ${FAILOVER_SALES} sales, one every ${FAILOVER_SALE_GAP_MS} ms; the primary (port ${oldPrimary}) killed after the ${FAILOVER_KILL_AFTER}th\n`,
  );
  // A sale the adapter sent twice would be a second order and a second capture in the ledger.
  await s.controls.changeSettings({ reusedClientOrderId: 'charge-again' });
  const stamp = (at: number) => `  ${((at - startedAt) / 1000).toFixed(1).padStart(6)}s`;
  const sales: ReturnType<PaymentStack['sale']>[] = [];
  const sentAt: number[] = [];
  let killedAt = 0;
  let killed: Promise<string> | undefined;
  const sending = (async () => {
    for (let i = 0; i < FAILOVER_SALES; i++) {
      const sale = s.sale({ cvv: '123', amountMinor: 1_000 + i });
      sales.push(sale);
      await s.send(sale);
      sentAt.push(Date.now());
      if (i + 1 === FAILOVER_KILL_AFTER) {
        killedAt = Date.now();
        killed = pgHa('kill-primary');
        process.stdout.write(
          `${stamp(killedAt)}  primary killed (SIGKILL of its pg_autoctl keeper and postmaster), ${i + 1} sales sent\n`,
        );
      }
      await new Promise((r) => setTimeout(r, FAILOVER_SALE_GAP_MS));
    }
  })();
  // The apps' readiness while no primary is writable (false until their pools find one).
  const notReady = new Map<string, { from: number; to?: number }>();
  let watching = true;
  const readiness = (async () => {
    while (watching) {
      for (const app of ['orchestrator', 'gateway-adapter'] as const) {
        const ok = await fetch(`${s.urls[app]}/health/ready`, {
          signal: AbortSignal.timeout(2_000),
        })
          .then((r) => r.ok)
          .catch(() => false);
        const seen = notReady.get(app);
        if (!ok && killedAt > 0 && seen === undefined) {
          notReady.set(app, { from: Date.now() });
          process.stdout.write(`${stamp(Date.now())}  ${app} /health/ready: not ready\n`);
        } else if (ok && seen !== undefined && seen.to === undefined) {
          seen.to = Date.now();
          process.stdout.write(
            `${stamp(seen.to)}  ${app} /health/ready: ready again (not ready for ${seen.to - seen.from} ms)\n`,
          );
        }
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  while (killed === undefined) await new Promise((r) => setTimeout(r, 20));
  const killedNode = await killed;
  const writableAt = await waitForWritablePrimary(url);
  const newPrimary = await pgHa('primary');
  process.stdout.write(
    `${stamp(writableAt)}  writable primary again: port ${newPrimary} (the promoted standby), ${writableAt - killedAt} ms without one\n`,
  );
  await sending;
  const outcomes = await Promise.allSettled(
    sales.map((sale) =>
      s.events
        .waitFor(sale.paymentId, (e) => FINAL_TYPES.includes(e.type), 90_000)
        .then(({ event }) => ({ sale, type: event.type, at: Date.now() })),
    ),
  );
  watching = false;
  await readiness;
  const finals = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
  const lost = sales.filter((sale) => !finals.some((f) => f.sale === sale));
  const sentAfterKill = finals.filter((f) => sales.indexOf(f.sale) >= FAILOVER_KILL_AFTER);
  let twice = 0;
  for (const sale of sales) {
    const type = finals.find((f) => f.sale === sale)?.type;
    const ledger = await s.controls.ledger(sale.paymentId);
    const orders = new Set(ledger.entries.map((e) => e.orderId)).size;
    const captures = ledger.entries.filter((e) => e.movement === 'captured').length;
    if (orders > 1 || captures > 1 || (type !== 'approved' && captures > 0)) twice++;
  }
  const approvedCount = finals.filter((f) => f.type === 'approved').length;
  const sentInOutage = sentAt.filter((t) => t > killedAt && t < writableAt).length;
  const firstAfterKill = Math.min(...sentAfterKill.map((f) => f.at));
  const drainedAt = Math.max(...finals.map((f) => f.at));
  process.stdout.write(
    `  first sale sent after the kill completed at +${firstAfterKill - killedAt} ms; every sale final at +${drainedAt - killedAt} ms\n` +
      `  ${sentInOutage} sales sent while no primary was writable (commands wait on the broker)\n` +
      `  ${finals.length} of ${sales.length} sales final (${approvedCount} approved), ${lost.length} lost, ${twice} sent twice (sandbox ledger)\n` +
      `  apps not ready meanwhile: ${notReady.size === 0 ? 'none seen (each poll found a primary)' : [...notReady.keys()].join(', ')}\n`,
  );
  const rejoinAt = Date.now();
  await pgHa('rejoin', killedNode);
  await pgHa('heal');
  process.stdout.write(
    `  node${killedNode} (the old primary) rejoined as the synchronous standby in ${Date.now() - rejoinAt} ms; primary: port ${await pgHa('primary')}\n`,
  );
  return lost.length === 0 && twice === 0 && approvedCount === sales.length;
}

main().catch((error: unknown) => {
  process.stderr.write(`demo failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
