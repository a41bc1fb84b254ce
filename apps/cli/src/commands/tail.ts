import { randomUUID } from 'node:crypto';
import type { KafkaMessage } from 'kafkajs';
import { TOPICS } from '@payments/contracts';
import { decodeEvent, EventSchemaMismatchError, sagaIdOf } from '@payments/sdk';
import { withTimeout, TimeoutError } from '@payments/core';
import { eventLine } from '../domain/event-line';
import { type CommonOptions, kafkaOf } from './options';

export interface TailOptions extends CommonOptions {
  readonly saga?: string;
  readonly type?: string[];
  readonly fromBeginning?: boolean;
  /** Stop after this many matching events. */
  readonly max?: number;
  /** Stop after this many seconds. */
  readonly seconds?: number;
  readonly json?: boolean;
}

/**
 * `payments tail`: the outcome events as they arrive (or from the beginning), decoded with the
 * SDK (CloudEvents headers + the contracts), filtered by saga and type, one line each (or one
 * JSON object with --json). An event this version cannot read is reported on stderr and skipped.
 * Reads through a throw-away consumer group that commits nothing and is deleted on exit.
 */
export async function tail(
  options: TailOptions,
  out: (line: string) => void,
  err: (line: string) => void,
  stop: AbortSignal,
): Promise<number> {
  const kafka = kafkaOf(options);
  const groupId = `payments-cli-tail-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, maxWaitTimeInMs: 250 });
  const types = new Set(options.type ?? []);
  let shown = 0;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  stop.addEventListener('abort', () => done(), { once: true });
  await consumer.connect();
  try {
    await consumer.subscribe({
      topics: [TOPICS.events],
      fromBeginning: options.fromBeginning === true,
    });
    const show = (topic: string, partition: number, message: KafkaMessage): void => {
      if (options.max !== undefined && shown >= options.max) return;
      let decoded;
      try {
        decoded = decodeEvent({
          topic,
          partition,
          offset: message.offset,
          value: message.value,
          headers: message.headers ?? {},
        });
      } catch (error) {
        if (!(error instanceof EventSchemaMismatchError)) throw error;
        err(`unreadable event at ${topic}/${partition}/${message.offset}: ${error.message}`);
        return;
      }
      const { event, meta } = decoded;
      const saga = sagaIdOf(event) ?? meta.subject;
      if (options.saga !== undefined && saga !== options.saga) return;
      if (types.size > 0 && !types.has(event.type)) return;
      shown++;
      out(
        options.json === true
          ? JSON.stringify({ meta, event })
          : eventLine({
              time: meta.time,
              subject: saga,
              event: event,
            }),
      );
      if (options.max !== undefined && shown >= options.max) done();
    };
    await consumer.run({
      autoCommit: false,
      eachMessage: ({ topic, partition, message }) => {
        show(topic, partition, message);
        return Promise.resolve();
      },
    });
    if (options.seconds === undefined) await finished;
    else {
      await withTimeout(finished, options.seconds * 1000, 'tail').catch((error: unknown) => {
        if (!(error instanceof TimeoutError)) throw error;
      });
    }
    return shown;
  } finally {
    await consumer.disconnect().catch(() => undefined);
    const admin = kafka.admin();
    await admin.connect().then(
      () => admin.deleteGroups([groupId]).catch(() => undefined),
      () => undefined,
    );
    await admin.disconnect().catch(() => undefined);
  }
}
