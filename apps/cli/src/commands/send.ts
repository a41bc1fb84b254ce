import { readFileSync } from 'node:fs';
import { Card } from '@payments/contracts';
import { InvalidCommandError, isCommandType, PaymentsProducer } from '@payments/sdk';
import { UsageError } from './errors';
import { brokersOf, type CommonOptions, readJsonFile } from './options';

export interface SendOptions extends CommonOptions {
  readonly card?: string;
  readonly destinationCard?: string;
  readonly sealingKey?: string;
  readonly sealingKeyId?: string;
  readonly source: string;
  readonly dryRun?: boolean;
}

function readCard(file: string, what: string): Card {
  const parsed = Card.safeParse(readJsonFile(file, what));
  if (!parsed.success) {
    // Never echo the file's values: they are card data.
    const fields = parsed.error.issues.map((i) => `${i.path.join('.') || '$'}: ${i.message}`);
    throw new UsageError(`${what} ${file} is not a card: ${fields.join('; ')}`);
  }
  return parsed.data;
}

function sealingKey(options: SendOptions): string | undefined {
  const file = options.sealingKey;
  if (file === undefined) return undefined;
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read the sealing key ${file}: ${(error as Error).message}`);
  }
}

/**
 * `payments send <command.json>`: a command as JSON (`type` plus the command's fields; commandId
 * and occurredAt generated unless given), validated against the contracts, the card (from its own
 * file, never from the command file) sealed to the gateway-adapter's public key, sent keyed by the
 * saga id. Prints one JSON line: what was sent (the sealed card shown by length only).
 */
export async function send(
  file: string,
  options: SendOptions,
  out: (line: string) => void,
): Promise<void> {
  const body = readJsonFile(file, 'the command file');
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new UsageError(`the command file ${file} must hold one JSON object`);
  }
  const { type, ...input } = body as Record<string, unknown>;
  if (!isCommandType(type)) throw new UsageError(`unknown command type ${JSON.stringify(type)}`);
  for (const field of ['card', 'destinationCard']) {
    if (field in input) {
      throw new UsageError(
        `the command file must not hold "${field}": pass the card in its own file (--card / --destination-card)`,
      );
    }
  }
  if (options.card !== undefined) input.card = readCard(options.card, 'the card file');
  if (options.destinationCard !== undefined) {
    input.destinationCard = readCard(options.destinationCard, 'the destination card file');
  }
  const key = sealingKey(options);
  const producer = new PaymentsProducer({
    brokers: brokersOf(options),
    clientId: 'payments-cli',
    source: options.source,
    ...(key === undefined ? {} : { cardSealingPublicKeyPem: key }),
    ...(options.sealingKeyId === undefined ? {} : { cardSealingKeyId: options.sealingKeyId }),
  });
  try {
    const shown = (command: Record<string, unknown>) => {
      const copy: Record<string, unknown> = { ...command };
      for (const f of ['sealedCard', 'sealedDestinationCard']) {
        if (typeof copy[f] === 'string') copy[f] = `<sealed, ${copy[f].length} characters>`;
      }
      return copy;
    };
    if (options.dryRun === true) {
      const command = producer.build(type, input as never) as Record<string, unknown>;
      out(JSON.stringify({ sent: false, dryRun: true, command: shown(command) }));
      return;
    }
    await producer.connect();
    const sent = await producer.send(type, input as never);
    out(
      JSON.stringify({
        sent: true,
        topic: sent.topic,
        sagaId: sent.sagaId,
        command: shown(sent.command),
      }),
    );
  } catch (error) {
    if (error instanceof InvalidCommandError) throw new UsageError(error.message);
    throw error;
  } finally {
    await producer.disconnect().catch(() => undefined);
  }
}
