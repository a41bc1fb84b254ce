/**
 * `npm run demo`: the main job on embedded defaults. Builds the apps, starts a local Kafka broker
 * (or uses KAFKA_BROKERS), creates two demo databases on the local PostgreSQL (or DATABASE_URL's
 * server), starts the gateway sandbox and the three apps as separate processes, sends a scripted
 * set of payment commands, prints the authoritative event stream as it arrives and a summary,
 * and stops everything it started.
 */
import { PaymentEvent } from '@payments/contracts';
import { ensureBroker, freshDatabase } from './stack/infra';
import { PaymentStack } from './stack/payment-stack';
import { run } from './stack/processes';
import { ReceivedEvent } from './stack/kafka-io';

const SERVER_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Scenario {
  readonly name: string;
  readonly paymentId: string;
  readonly done: (events: PaymentEvent[]) => boolean;
}

const labels = new Map<string, string>();
const startedAt = Date.now();

function money(minor: number, currency: string): string {
  const digits = String(minor).padStart(3, '0');
  return `${digits.slice(0, -2)}.${digits.slice(-2)} ${currency}`;
}

function describe(event: PaymentEvent): string {
  const e = event as PaymentEvent & Record<string, unknown>;
  const amount = e.amount as { minor: number; currency: string } | undefined;
  const parts: string[] = [event.type];
  if (amount) parts.push(money(amount.minor, amount.currency));
  if (typeof e.reason === 'string') parts.push(`reason=${e.reason}`);
  if (typeof e.code === 'string') parts.push(`code=${e.code}`);
  if (typeof e.message === 'string') parts.push(`"${e.message}"`);
  const card = e.card as { brand?: string; bin?: string; lastFour?: string } | undefined;
  if (card?.lastFour) parts.push(`${card.brand ?? 'card'} ${card.bin ?? ''}…${card.lastFour}`);
  return parts.join('  ');
}

function printEvent(received: ReceivedEvent): void {
  // A broker given by KAFKA_BROKERS may hold events of earlier runs: show only this run's payments.
  const label = labels.get(received.event.paymentId);
  if (label === undefined) return;
  const t = ((received.receivedAt - startedAt) / 1000).toFixed(1).padStart(6);
  process.stdout.write(
    `  ${t}s  ${label.padEnd(28)} v${String(received.event.version).padEnd(3)} ${describe(received.event)}\n`,
  );
}

async function main(): Promise<void> {
  process.stdout.write('== building the apps\n');
  await run('npm', ['run', '--silent', 'build']);
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
      },
      printEvent,
    );
    for (const [app, url] of Object.entries(stack.urls)) {
      process.stdout.write(
        `   ${app.padEnd(16)} ${url}  (log: ${stack.apps[app as keyof typeof stack.urls].logFile})\n`,
      );
    }
    const s = stack;
    const scenarios: Scenario[] = [];
    const add = (name: string, paymentId: string, finalTypes: string[]) => {
      labels.set(paymentId, name);
      scenarios.push({
        name,
        paymentId,
        done: (events) => events.some((e) => finalTypes.includes(e.type)),
      });
    };

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
    await s.send(approved, declined, lost, preauth);

    await s.events.waitForType(preauth.paymentId, ['authorized'], 90_000);
    await s.send(s.capture(preauth.paymentId, 7_000));
    await s.events.waitForType(preauth.paymentId, ['captured'], 90_000);
    await s.send(s.return(preauth.paymentId, 2_000));

    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      if (scenarios.every((sc) => sc.done(s.events.eventsOf(sc.paymentId).map((r) => r.event))))
        break;
      await new Promise((r) => setTimeout(r, 250));
    }

    process.stdout.write('\n== summary\n');
    process.stdout.write(
      `  ${'scenario'.padEnd(28)} ${'last event'.padEnd(18)} ${'events'.padEnd(7)} gateway ledger (minor units)\n`,
    );
    let allDone = true;
    for (const sc of scenarios) {
      const events = s.events.eventsOf(sc.paymentId).map((r) => r.event);
      const ledger = await s.controls.ledger(sc.paymentId);
      const last = events.at(-1)?.type ?? '(none)';
      allDone &&= sc.done(events);
      process.stdout.write(
        `  ${sc.name.padEnd(28)} ${last.padEnd(18)} ${String(events.length).padEnd(7)} ${JSON.stringify(ledger.totals)}\n`,
      );
    }
    process.stdout.write(
      allDone
        ? '\nAll scenarios reached their final outcome.\n'
        : '\nSome scenarios did not finish in time; see the logs above.\n',
    );
    process.exitCode = allDone ? 0 : 1;
  } finally {
    process.stdout.write('== stopping everything\n');
    await stack?.stop();
    await broker.stop();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`demo failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exitCode = 1;
});
