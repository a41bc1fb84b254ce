/**
 * A service using @payments/sdk: it listens for outcome events, sends one sale with the card
 * sealed, and prints the sale's events until its final one.
 *
 *   node sale-and-listen.js input.json
 *
 * input.json: { "brokers": [...], "cardSealingPublicKeyPem": "...", "groupId": "...",
 *               "sale": { paymentId, merchant, amount, order, customer, billingAddress,
 *                         redirectUrl }, "card": { number, expiryMonth, expiryYear, cvv,
 *                         holderName } }
 */
import { readFileSync } from 'node:fs';
import {
  type Card,
  type CommandInput,
  type EventMeta,
  type OutcomeEvent,
  PaymentsEventConsumer,
  PaymentsProducer,
} from '@payments/sdk';

interface Input {
  brokers: string[];
  cardSealingPublicKeyPem: string;
  groupId: string;
  sale: Omit<CommandInput<'sale'>, 'card'>;
  card: Card;
}

const FINAL = new Set(['approved', 'declined', 'failed']);

/** The sample's output: one JSON line per fact (what a test or a person reads). */
function emit(fact: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify(fact)}\n`);
}

async function main(): Promise<void> {
  const input = JSON.parse(readFileSync(process.argv[2] ?? 'input.json', 'utf8')) as Input;
  const paymentId = input.sale.paymentId;
  let finish!: (event: OutcomeEvent) => void;
  const final = new Promise<OutcomeEvent>((resolve) => (finish = resolve));

  const onPaymentEvent = (event: OutcomeEvent, meta: EventMeta): void => {
    if (!('paymentId' in event) || event.paymentId !== paymentId) return;
    emit({ seen: event.type, version: event.version, ceId: meta.ceId });
    if (FINAL.has(event.type)) finish(event);
  };
  const consumer = new PaymentsEventConsumer({
    brokers: input.brokers,
    groupId: input.groupId,
    handlers: {
      'operation-requested': onPaymentEvent,
      'accepted-by-gateway': onPaymentEvent,
      approved: (event, meta) => {
        onPaymentEvent(event, meta);
        if (event.paymentId === paymentId)
          emit({ approved: event.paymentId, amount: event.amount, card: event.card });
      },
      declined: onPaymentEvent,
      failed: onPaymentEvent,
    },
    onMismatch: (error) => emit({ mismatch: error.reason }),
  });
  await consumer.start();

  const producer = new PaymentsProducer({
    brokers: input.brokers,
    source: '/examples/sale-and-listen',
    cardSealingPublicKeyPem: input.cardSealingPublicKeyPem,
  });
  await producer.connect();
  const sent = await producer.sale({ ...input.sale, card: input.card });
  emit({ sent: sent.command.type, commandId: sent.command.commandId });

  const event = await final;
  emit({ final: event.type });
  await producer.disconnect();
  await consumer.stop();
}

main().catch((error: unknown) => {
  process.stderr.write(`${String(error)}\n`);
  process.exit(1);
});
