import { randomUUID } from 'node:crypto';
import { Partitioners } from 'kafkajs';
import { IdempotentSender } from '@payments/kafka/idempotent-sender';
import { type Card, ceType, seal, toKafkaHeaders, TOPICS } from '@payments/contracts';
import {
  type CommandOf,
  type CommandType,
  COMMAND_SCHEMAS,
  isCommandType,
  sagaIdOf,
} from './catalogue';
import { type ConnectionOptions, kafkaClient } from './connection';
import { InvalidCommandError } from './errors';

/**
 * What a caller gives for a command of type T: the command without `type`, `commandId` and
 * `occurredAt` (generated unless given), and, where the command carries a sealed card, the card
 * itself instead — the producer seals it to the gateway-adapter's public key.
 */
/** The clear-card field a caller gives for each sealed-card field of a command. */
const CLEAR_CARD_FIELDS = { sealedCard: 'card', sealedDestinationCard: 'destinationCard' } as const;
type SealedField = keyof typeof CLEAR_CARD_FIELDS;

type ClearCards<C> = {
  [F in SealedField as C extends Record<F, string> ? (typeof CLEAR_CARD_FIELDS)[F] : never]: Card;
};

/**
 * What a caller gives for a command of type T: the command without `type`, `commandId` and
 * `occurredAt` (generated unless given), and, for each sealed card the command carries, the card
 * itself instead (`card` for `sealedCard`, `destinationCard` for `sealedDestinationCard`) — the
 * producer seals it to the gateway-adapter's public key, bound to the saga id.
 */
export type CommandInput<T extends CommandType> = Omit<
  CommandOf<T>,
  'type' | 'commandId' | 'occurredAt' | SealedField
> & {
  commandId?: string;
  occurredAt?: string;
} & ClearCards<CommandOf<T>>;

export interface SentCommand<T extends CommandType = CommandType> {
  readonly command: CommandOf<T>;
  /** The saga it is about (payment, payout or schedule id): the record key. */
  readonly sagaId: string;
  readonly topic: string;
}

export interface PaymentsProducerOptions extends ConnectionOptions {
  /** `ce_source` of every command: a URI-reference naming the sending service. */
  readonly source: string;
  /** The gateway-adapter's card-sealing public key (PEM): needed for commands that carry a card. */
  readonly cardSealingPublicKeyPem?: string;
  /** Which of the adapter's keys it is (key rotation). */
  readonly cardSealingKeyId?: string;
  /** How long a send may wait for the brokers' acknowledgement (ms, default 30,000). */
  readonly sendTimeoutMs?: number;
  /** For tests. */
  readonly now?: () => Date;
}

/**
 * Sends commands to `payments.commands.v1`: validated against the contracts before anything
 * leaves the process, the card sealed, ids generated, the record keyed by the saga id (per-saga
 * order), CloudEvents headers set (ce_id = commandId, ce_type, ce_source, ce_subject, ce_time,
 * traceparent), acks from all in-sync replicas, idempotent producer used as the services use
 * theirs (IdempotentSender: one produce call at a time, a producer whose call failed replaced, so
 * an acknowledgement always means the command is in the log). A send that rejects has an unknown
 * outcome: send it again with the same commandId; the orchestrator de-duplicates by it.
 */
export class PaymentsProducer {
  private readonly sender: IdempotentSender;
  private readonly now: () => Date;
  private readonly sendTimeoutMs: number;

  constructor(private readonly options: PaymentsProducerOptions) {
    const kafka = kafkaClient(options, 'PaymentsProducer');
    this.sender = new IdempotentSender(() =>
      kafka.producer({
        idempotent: true,
        maxInFlightRequests: 1,
        createPartitioner: Partitioners.DefaultPartitioner,
      }),
    );
    this.sendTimeoutMs = options.sendTimeoutMs ?? 30_000;
    this.now = options.now ?? (() => new Date());
  }

  connect(): Promise<void> {
    return this.sender.connect();
  }

  disconnect(): Promise<void> {
    return this.sender.close();
  }

  /** Builds and validates a command without sending it (the card is sealed). */
  build<T extends CommandType>(type: T, input: CommandInput<T>): CommandOf<T> {
    if (!isCommandType(type)) throw new InvalidCommandError(String(type), ['unknown command type']);
    const rest: Record<string, unknown> = { ...(input as Record<string, unknown>) };
    const draft: Record<string, unknown> = {
      type,
      commandId: rest.commandId ?? randomUUID(),
      occurredAt: rest.occurredAt ?? this.now().toISOString(),
    };
    for (const [sealedField, clearField] of Object.entries(CLEAR_CARD_FIELDS)) {
      const card = rest[clearField] as Card | undefined;
      delete rest[clearField];
      if (card === undefined) continue;
      const sagaId = sagaIdOf({ ...rest, ...draft });
      if (this.options.cardSealingPublicKeyPem === undefined)
        throw new InvalidCommandError(type, [
          'a card needs cardSealingPublicKeyPem in the options',
        ]);
      if (sagaId === undefined) throw new InvalidCommandError(type, ['no saga id to seal to']);
      draft[sealedField] = seal(card, this.options.cardSealingPublicKeyPem, sagaId, {
        ...(this.options.cardSealingKeyId === undefined
          ? {}
          : { keyId: this.options.cardSealingKeyId }),
      });
    }
    Object.assign(draft, rest, { type, commandId: draft.commandId, occurredAt: draft.occurredAt });
    const parsed = COMMAND_SCHEMAS[type].safeParse(draft);
    if (!parsed.success) {
      throw new InvalidCommandError(
        type,
        parsed.error.issues.map((i) => `${i.path.join('.') || '$'}: ${i.message}`),
      );
    }
    return parsed.data;
  }

  /** Validates, seals and sends one command; resolves once the brokers have it. */
  async send<T extends CommandType>(type: T, input: CommandInput<T>): Promise<SentCommand<T>> {
    const command = this.build(type, input);
    const sagaId = sagaIdOf(command);
    if (sagaId === undefined) throw new InvalidCommandError(type, ['no saga id']);
    const c = command as { commandId: string; occurredAt: string };
    await this.sender.send(
      TOPICS.commands,
      [
        {
          key: sagaId,
          value: JSON.stringify(command),
          headers: toKafkaHeaders({
            id: c.commandId,
            type: ceType.command(type),
            source: this.options.source,
            subject: sagaId,
            time: c.occurredAt,
          }),
        },
      ],
      this.sendTimeoutMs,
    );
    return { command, sagaId, topic: TOPICS.commands };
  }

  // Named shortcuts for the commands services send most; `send(type, …)` takes every other.
  sale = (input: CommandInput<'sale'>): Promise<SentCommand<'sale'>> => this.send('sale', input);
  preauth = (input: CommandInput<'preauth'>): Promise<SentCommand<'preauth'>> =>
    this.send('preauth', input);
  capture = (input: CommandInput<'capture'>): Promise<SentCommand<'capture'>> =>
    this.send('capture', input);
  void = (input: CommandInput<'void'>): Promise<SentCommand<'void'>> => this.send('void', input);
  refund = (input: CommandInput<'return'>): Promise<SentCommand<'return'>> =>
    this.send('return', input);
  payout = (input: CommandInput<'payout'>): Promise<SentCommand<'payout'>> =>
    this.send('payout', input);
  transfer = (input: CommandInput<'transfer'>): Promise<SentCommand<'transfer'>> =>
    this.send('transfer', input);
  payoutCheck = (input: CommandInput<'payout-check'>): Promise<SentCommand<'payout-check'>> =>
    this.send('payout-check', input);
  approvePayout = (input: CommandInput<'approve-payout'>): Promise<SentCommand<'approve-payout'>> =>
    this.send('approve-payout', input);
  rejectPayout = (input: CommandInput<'reject-payout'>): Promise<SentCommand<'reject-payout'>> =>
    this.send('reject-payout', input);
  createSchedule = (
    input: CommandInput<'create-schedule'>,
  ): Promise<SentCommand<'create-schedule'>> => this.send('create-schedule', input);
}
