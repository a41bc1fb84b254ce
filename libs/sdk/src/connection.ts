import { Kafka, type KafkaConfig, logLevel } from 'kafkajs';

/** How the producer and the consumer reach the brokers: a list of brokers, or your own client. */
export interface ConnectionOptions {
  readonly brokers?: readonly string[];
  readonly kafka?: Kafka;
  readonly clientId?: string;
  readonly kafkaConfig?: Partial<KafkaConfig>;
}

/** The caller's kafkajs client, or one for `brokers`; `who` names the class in the error. */
export function kafkaClient(options: ConnectionOptions, who: string): Kafka {
  if (options.kafka !== undefined) return options.kafka;
  if ((options.brokers ?? []).length === 0)
    throw new Error(`${who} needs \`brokers\` or a \`kafka\` client`);
  return new Kafka({
    clientId: options.clientId ?? 'payments-sdk',
    brokers: [...(options.brokers ?? [])],
    // kafkajs logs INFO lines to stdout by default; a library should not.
    logLevel: logLevel.WARN,
    ...options.kafkaConfig,
  });
}
