/**
 * A broker restart mid-run loses nothing. A broker of this test's own (not the
 * shared one: it is stopped and killed here) takes a steady stream from libs/kafka's producer while
 * libs/kafka's consumer runner handles it; the broker is stopped (SIGTERM) and restarted, then
 * killed (SIGKILL) and restarted, on the same data directory. Every acknowledged message must be
 * handled, and still be in the topic for a reader starting from the beginning.
 */
import { z } from 'zod';
import { defineHandler } from '@payments/kafka';
import {
  type KafkaTestApp,
  readMessages,
  startKafkaTestApp,
  uniqueName,
  waitFor,
} from '../../../test/support/kafka';
import { type LocalKafka, startLocalBroker } from '../../../test/support/local-kafka';

jest.setTimeout(240_000);

const Payload = z.object({ id: z.string(), n: z.number().int() });

describe('libs/kafka across broker restarts', () => {
  let broker: LocalKafka;
  let started: KafkaTestApp | undefined;
  const sharedBrokers = process.env.KAFKA_BROKERS;

  beforeAll(async () => {
    broker = await startLocalBroker();
    // Every helper of test/support/kafka reads KAFKA_BROKERS: point them at this broker.
    process.env.KAFKA_BROKERS = broker.brokers.join(',');
  });

  afterAll(async () => {
    await started?.app.close();
    process.env.KAFKA_BROKERS = sharedBrokers;
    await broker.sh('stop', '--wipe');
  });

  it('stopped (SIGTERM) and killed (SIGKILL) mid-run, restarted on its data: every acknowledged message is handled and still in the topic', async () => {
    const topic = uniqueName('restart');
    const groupId = uniqueName('restart-group');
    const handled: number[] = [];
    started = await startKafkaTestApp(
      {
        groupId,
        handlers: [defineHandler(topic, Payload, async (m) => void handled.push(m.value.n))],
      },
      { topicPartitions: 3, partitionsConsumedConcurrently: 3 },
    );
    const { producer, runner } = started;

    const acknowledged: number[] = [];
    const failed: number[] = [];
    let producing = true;
    const production = (async () => {
      for (let n = 0; producing; n++) {
        try {
          await producer.send(topic, [{ key: `pay-${n % 7}`, value: { id: `m-${n}`, n } }]);
          acknowledged.push(n);
        } catch {
          failed.push(n); // not acknowledged: its outcome is unknown, nothing to expect
        }
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const moreAcknowledged = async (count: number, what: string) => {
      const target = acknowledged.length + count;
      await waitFor(() => acknowledged.length >= target, what, 120_000);
    };

    await moreAcknowledged(30, '30 messages before any restart');
    await broker.sh('stop'); // SIGTERM: clean shutdown, data kept
    await broker.sh('start');
    await moreAcknowledged(30, '30 messages after the clean restart');
    await broker.sh('kill'); // SIGKILL: a crash
    await broker.sh('start');
    await moreAcknowledged(30, '30 messages after the crash restart');
    producing = false;
    await production;

    const expected = new Set(acknowledged);
    await waitFor(
      () => [...expected].every((n) => handled.includes(n)),
      'every acknowledged message to be handled',
      120_000,
    );
    // The consumer rode through both restarts (kafkajs reconnected; the runner never gave up).
    expect(runner.status).toEqual({ state: 'running' });

    // The topic kept everything written before the restarts: a new reader sees every message.
    const stored = await readMessages(topic, acknowledged.length, 120_000);
    const storedNs = new Set(
      stored.map((m) => (JSON.parse(m.value?.toString() ?? '{}') as { n: number }).n),
    );
    expect(acknowledged.filter((n) => !storedNs.has(n))).toEqual([]);
    expect(acknowledged.filter((n) => !handled.includes(n))).toEqual([]);
    // Every message that reached the topic was acknowledged, or its send failed (unknown outcome).
    expect([...storedNs].filter((n) => !expected.has(n) && !failed.includes(n))).toEqual([]);
  });
});
