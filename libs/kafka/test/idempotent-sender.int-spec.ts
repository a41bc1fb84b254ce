/**
 * An acknowledgement must mean "in the log". The fault: the broker writes a produce request but
 * its answer never reaches the client (the connection dies first) — what a leader SIGKILL after
 * replication does, injected here at the client's socket so it happens every time. kafkajs then
 * hands the batch's sequence numbers back, and the next batch for the partition reuses them.
 */
import { connect, type Socket } from 'node:net';
import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import { IdempotentSender } from '@payments/kafka';
import {
  createTopics,
  readMessages,
  testBrokers,
  uniqueName,
  withAdmin,
} from '../../../test/support/kafka';

jest.setTimeout(60_000);

const PRODUCE = 0; // Kafka API key of a Produce request
const RETRIES = 1; // kafkajs refuses an idempotent producer without retries

/**
 * A kafkajs client whose sockets can lose the broker's answers to the next Produce requests (as many
 * as the producer makes for one call, so the call fails): each
 * request reaches the broker (which writes it), the connection is destroyed when the answer
 * arrives, before kafkajs reads it.
 */
function faultyClient(clientId: string): { kafka: Kafka; loseProduceAnswers: () => void } {
  let armed = 0;
  const kafka = new Kafka({
    clientId,
    brokers: testBrokers(),
    logLevel: logLevel.NOTHING,
    socketFactory: ({ host, port, onConnect }) => {
      const socket: Socket = connect({ host, port }, onConnect);
      let dropAnswer = false;
      const write = socket.write.bind(socket) as (chunk: Buffer, ...rest: unknown[]) => boolean;
      socket.write = (chunk: Buffer, ...rest: unknown[]) => {
        // Request framing: int32 size, int16 api key, …
        if (
          armed > 0 &&
          Buffer.isBuffer(chunk) &&
          chunk.length >= 6 &&
          chunk.readInt16BE(4) === PRODUCE
        ) {
          armed -= 1;
          dropAnswer = true;
        }
        return write(chunk, ...rest);
      };
      const emit = socket.emit.bind(socket) as (
        event: string | symbol,
        ...args: unknown[]
      ) => boolean;
      socket.emit = ((event: string | symbol, ...args: unknown[]) => {
        if (event === 'data' && dropAnswer) {
          dropAnswer = false;
          socket.destroy(new Error('injected: the Produce answer was lost'));
          return true;
        }
        return emit(event, ...args);
      }) as Socket['emit'];
      return socket;
    },
  });
  return { kafka, loseProduceAnswers: () => (armed = RETRIES + 1) };
}

function idempotentProducer(kafka: Kafka): Producer {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
    retry: { retries: RETRIES }, // bounded, as in libs/kafka; the fault outlasts them
  });
}

/** Every value in the (one-partition) topic, up to its high watermark, sorted. */
async function valuesIn(topic: string): Promise<string[]> {
  const offsets = await withAdmin((admin) => admin.fetchTopicOffsets(topic));
  const count = offsets.reduce((n, p) => n + Number(p.high), 0);
  const messages = await readMessages(topic, count);
  return messages.map((m) => m.value?.toString() ?? '').sort();
}

describe('an acknowledged send is in the log even after a send whose answer was lost', () => {
  it('kafkajs alone: the next send reuses the lost call’s sequence numbers and is acknowledged but dropped (why IdempotentSender exists)', async () => {
    const topic = uniqueName('lost-answer-raw');
    await createTopics([topic], 1);
    const { kafka, loseProduceAnswers } = faultyClient('raw');
    const producer = idempotentProducer(kafka);
    await producer.connect();
    try {
      await producer.send({ topic, acks: -1, messages: [{ key: 'k', value: 'first' }] });
      loseProduceAnswers();
      await expect(
        producer.send({ topic, acks: -1, messages: [{ key: 'k', value: 'written, answer lost' }] }),
      ).rejects.toThrow();
      await producer.send({ topic, acks: -1, messages: [{ key: 'k', value: 'acknowledged' }] });
      await producer.send({ topic, acks: -1, messages: [{ key: 'k', value: 'last' }] });
    } finally {
      await producer.disconnect();
    }
    // Four sends, three acknowledged; the log holds three — and not the acknowledged one.
    const values = await valuesIn(topic);
    expect(values).toEqual(['first', 'last', 'written, answer lost']);
  });

  it('IdempotentSender: the call that failed retires the producer, so the next send lands on a new producer id', async () => {
    const topic = uniqueName('lost-answer-sender');
    await createTopics([topic], 1);
    const { kafka, loseProduceAnswers } = faultyClient('sender');
    const producers: Producer[] = [];
    const sender = new IdempotentSender(() => {
      const producer = idempotentProducer(kafka);
      producers.push(producer);
      return producer;
    });
    try {
      await sender.send(topic, [{ key: 'k', value: 'first' }], 10_000);
      loseProduceAnswers();
      await expect(
        sender.send(topic, [{ key: 'k', value: 'written, answer lost' }], 10_000),
      ).rejects.toThrow();
      await sender.send(topic, [{ key: 'k', value: 'acknowledged' }], 10_000);
      await sender.send(topic, [{ key: 'k', value: 'last' }], 10_000);
    } finally {
      await sender.close();
    }
    expect(producers).toHaveLength(2);
    const values = await valuesIn(topic);
    expect(values).toEqual(['acknowledged', 'first', 'last', 'written, answer lost']);
  });
});
