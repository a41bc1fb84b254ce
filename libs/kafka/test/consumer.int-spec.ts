/**
 * libs/kafka against the real broker (KAFKA_BROKERS, set by scripts/with-infra.sh). Each test has
 * its own topics and consumer group. Handlers record every invocation in arrays (never sets), so
 * a duplicate delivery is visible.
 */
import { z } from 'zod';
import {
  defineHandler,
  dlqTopicFor,
  KAFKA_METRIC,
  KafkaBrokerHealthCheck,
  PoisonMessageError,
} from '@payments/kafka';
import {
  committedOffsets,
  gate,
  type KafkaTestApp,
  memoryLogger,
  metricValue,
  produceRaw,
  readMessages,
  startKafkaTestApp,
  testBrokers,
  uniqueName,
  waitFor,
  withAdmin,
} from '../../../test/support/kafka';

// The integration project's testTimeout is not applied per project by Jest 30: set it here.
jest.setTimeout(120_000);

const Payload = z.object({ id: z.string(), n: z.number().int() });
type Payload = z.infer<typeof Payload>;

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('libs/kafka against a real broker', () => {
  const apps: KafkaTestApp[] = [];
  const start = async (...args: Parameters<typeof startKafkaTestApp>) => {
    const started = await startKafkaTestApp(...args);
    apps.push(started);
    return started;
  };

  beforeAll(() => {
    testBrokers(); // a clear message when the broker is missing
  });

  afterEach(async () => {
    while (apps.length > 0) await apps.pop()?.app.close();
  });

  it('round trip: the producer sends JSON with key and headers, the handler gets it decoded, the offset is committed', async () => {
    const topic = uniqueName('rt');
    const groupId = uniqueName('rt-group');
    const received: Array<{
      value: Payload;
      key: string | null;
      headers: Record<string, string>;
      partition: number;
      offset: string;
    }> = [];
    const { producer } = await start({
      groupId,
      handlers: [
        defineHandler(topic, Payload, async (m) => {
          received.push({
            value: m.value,
            key: m.key,
            headers: { ...m.headers },
            partition: m.partition,
            offset: m.offset,
          });
        }),
      ],
    });

    const [metadata] = await producer.send(topic, [
      {
        key: 'pay-1',
        value: { id: 'a', n: 1 },
        headers: {
          ce_id: 'evt-1',
          traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
        },
      },
    ]);
    expect(metadata?.errorCode).toBe(0);

    await waitFor(() => received.length === 1, 'the message to be handled');
    expect(received[0]).toEqual({
      value: { id: 'a', n: 1 },
      key: 'pay-1',
      headers: {
        ce_id: 'evt-1',
        traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
      },
      partition: 0,
      offset: '0',
    });
    // Committed offset = next offset to read; the commit happens right after the handler returned.
    await waitFor(
      async () => (await committedOffsets(groupId, topic)).get(0) === '1',
      'offset 1 committed',
    );
    expect(await metricValue(KAFKA_METRIC.handled, { group: groupId, topic })).toBe(1);
  });

  it('poison messages (bad JSON, schema failure, PoisonMessageError) go to <topic>.dlq with original bytes and reason headers; the partition keeps flowing', async () => {
    const topic = uniqueName('poison');
    const groupId = uniqueName('poison-group');
    const calls: string[] = [];
    await start({
      groupId,
      handlers: [
        defineHandler(topic, Payload, async (m) => {
          calls.push(m.value.id);
          if (m.value.id === 'refuse') throw new PoisonMessageError('command cannot be executed');
        }),
      ],
    });

    const badJson = Buffer.from('{"id":"x", broken');
    const wrongShape = json({ id: 42, n: 'one' });
    const refused = json({ id: 'refuse', n: 3 });
    await produceRaw(topic, [
      { key: 'pay-7', value: badJson, headers: { ce_id: 'e-0' } },
      { key: 'pay-7', value: wrongShape, headers: { ce_id: 'e-1' } },
      { key: 'pay-7', value: refused, headers: { ce_id: 'e-2' } },
      { key: 'pay-7', value: json({ id: 'good', n: 4 }), headers: { ce_id: 'e-3' } },
    ]);

    await waitFor(() => calls.includes('good'), 'the good message after the poison ones');
    // The handler never saw the undecodable ones; the refused one was not retried.
    expect(calls).toEqual(['refuse', 'good']);

    const dlq = await readMessages(dlqTopicFor(topic), 3);
    const byOffset = new Map(dlq.map((m) => [m.headers?.['dlq-original-offset']?.toString(), m]));
    const expectations: Array<[string, Buffer, string, RegExp]> = [
      ['0', badJson, 'parse', /not valid JSON/],
      ['1', wrongShape, 'schema', /id: .*n: /],
      ['2', refused, 'non-retriable', /PoisonMessageError: command cannot be executed/],
    ];
    for (const [offset, value, reason, error] of expectations) {
      const record = byOffset.get(offset);
      expect(record).toBeDefined();
      expect(record?.key?.toString()).toBe('pay-7');
      expect(record?.value?.equals(value)).toBe(true);
      expect(record?.headers?.['dlq-reason']?.toString()).toBe(reason);
      expect(record?.headers?.['dlq-error']?.toString()).toMatch(error);
      expect(record?.headers?.['dlq-original-topic']?.toString()).toBe(topic);
      expect(record?.headers?.['dlq-original-partition']?.toString()).toBe('0');
      expect(record?.headers?.['dlq-consumer-group']?.toString()).toBe(groupId);
      expect(record?.headers?.ce_id?.toString()).toBe(`e-${offset}`);
    }

    await waitFor(
      async () => (await committedOffsets(groupId, topic)).get(0) === '4',
      'all 4 offsets committed',
    );
    for (const reason of ['parse', 'schema', 'non-retriable']) {
      expect(await metricValue(KAFKA_METRIC.deadLettered, { group: groupId, topic, reason })).toBe(
        1,
      );
    }
  });

  it('card data never rests in the dead-letter topic: clear card numbers masked, CVVs blanked, coordinates and reason kept (JSON, broken JSON, refused by the handler)', async () => {
    const topic = uniqueName('dlq-card');
    const groupId = uniqueName('dlq-card-group');
    await start({
      groupId,
      handlers: [
        defineHandler(topic, Payload, async () => {
          throw new PoisonMessageError('PLAIN_CARD_DATA at $.card');
        }),
      ],
    });
    const card = { number: '4111 1111 1111 1111', cvv: '123', securityCode: '4321' };
    await produceRaw(topic, [
      { key: 'pay-9', value: json({ id: 'sale-1', n: 'x', card }) },
      { key: 'pay-9', value: Buffer.from('pan=4111111111111111&cvv2=123&broken{') },
      { key: 'pay-9', value: json({ id: 'sale-2', n: 2, card }) },
    ]);

    const dlq = await readMessages(dlqTopicFor(topic), 3);
    const byOffset = new Map(dlq.map((m) => [m.headers?.['dlq-original-offset']?.toString(), m]));
    for (const [offset, reason] of [
      ['0', 'schema'],
      ['1', 'parse'],
      ['2', 'non-retriable'],
    ]) {
      const record = byOffset.get(offset);
      const value = record?.value?.toString() ?? '';
      expect(value).toContain('411111******1111');
      expect(value.replace(/[ -]/g, '')).not.toContain('4111111111111111');
      expect(value).not.toMatch(/123|4321/);
      expect(record?.key?.toString()).toBe('pay-9');
      expect(record?.headers?.['dlq-reason']?.toString()).toBe(reason);
      expect(record?.headers?.['dlq-original-topic']?.toString()).toBe(topic);
      expect(record?.headers?.['dlq-original-partition']?.toString()).toBe('0');
    }
    expect(JSON.parse(byOffset.get('2')?.value?.toString() ?? 'null')).toEqual({
      id: 'sale-2',
      n: 2,
      card: { number: '411111******1111', cvv: '', securityCode: '' },
    });
  });

  it('retries a retriable failure in place until it succeeds (committed once), and dead-letters when retries run out', async () => {
    const topic = uniqueName('retry');
    const groupId = uniqueName('retry-group');
    const calls: string[] = [];
    await start({
      groupId,
      retry: { retries: 3, initialDelayMs: 20, maxDelayMs: 50 },
      handlers: [
        defineHandler(topic, Payload, async (m) => {
          calls.push(m.value.id);
          const attempts = calls.filter((id) => id === m.value.id).length;
          if (m.value.id === 'flaky' && attempts <= 2) throw new Error('database timeout');
          if (m.value.id === 'broken') throw new Error('always failing');
        }),
      ],
    });

    await produceRaw(topic, [
      { key: 'k', value: json({ id: 'flaky', n: 1 }) },
      { key: 'k', value: json({ id: 'after-flaky', n: 2 }) },
      { key: 'k', value: json({ id: 'broken', n: 3 }) },
      { key: 'k', value: json({ id: 'after-broken', n: 4 }) },
    ]);

    await waitFor(() => calls.includes('after-broken'), 'the last message');
    // In order, flaky 3 times (2 failures + success), broken 4 times (1 + 3 retries).
    expect(calls).toEqual([
      'flaky',
      'flaky',
      'flaky',
      'after-flaky',
      'broken',
      'broken',
      'broken',
      'broken',
      'after-broken',
    ]);
    await waitFor(
      async () => (await committedOffsets(groupId, topic)).get(0) === '4',
      'all offsets committed',
    );
    expect(await metricValue(KAFKA_METRIC.handled, { group: groupId, topic })).toBe(3);
    expect(await metricValue(KAFKA_METRIC.failed, { group: groupId, topic })).toBe(6);
    expect(
      await metricValue(KAFKA_METRIC.deadLettered, {
        group: groupId,
        topic,
        reason: 'retries-exhausted',
      }),
    ).toBe(1);
    expect(
      await metricValue(KAFKA_METRIC.deadLettered, {
        group: groupId,
        topic,
        reason: 'non-retriable',
      }),
    ).toBe(0);

    const [dead] = await readMessages(dlqTopicFor(topic), 1);
    expect(JSON.parse(dead?.value?.toString() ?? 'null')).toEqual({ id: 'broken', n: 3 });
    expect(dead?.headers?.['dlq-reason']?.toString()).toBe('retries-exhausted');
    expect(dead?.headers?.['dlq-error']?.toString()).toMatch(
      /after 4 attempts: Error: always failing/,
    );
    expect(dead?.headers?.['dlq-original-offset']?.toString()).toBe('2');
  });

  it('a shutdown in the middle of a batch loses nothing and handles nothing twice', async () => {
    const topic = uniqueName('shutdown');
    const groupId = uniqueName('shutdown-group');
    const total = 200;
    const stopAt = 50;
    const handled: number[] = []; // every invocation, in order, across both consumers
    const held = gate();
    const reachedStopAt = gate();
    const handler = defineHandler(topic, Payload, async (m) => {
      handled.push(m.value.n);
      if (m.value.n === stopAt) {
        reachedStopAt.open();
        await held.promise; // in flight while the app shuts down
      }
      await new Promise((resolve) => setImmediate(resolve));
    });
    const first = await start({ groupId, handlers: [handler] });

    await produceRaw(
      topic,
      Array.from({ length: total }, (_, n) => ({
        key: `pay-${n % 7}`,
        partition: 0,
        value: json({ id: `m-${n}`, n }),
      })),
    );

    await reachedStopAt.promise;
    const closing = first.app.close();
    apps.splice(apps.indexOf(first), 1);
    await waitFor(() => first.runner.status.state === 'stopping', 'the consumer to start stopping');
    held.open();
    await closing;
    expect(first.runner.status.state).toBe('stopped');

    // The first consumer finished its in-flight message and stopped right there.
    expect(handled).toEqual(Array.from({ length: stopAt + 1 }, (_, n) => n));
    expect((await committedOffsets(groupId, topic)).get(0)).toBe(String(stopAt + 1));

    await start({ groupId, handlers: [handler] });
    await waitFor(() => handled.length >= total, `${total} handled messages`);
    await waitFor(
      async () => (await committedOffsets(groupId, topic)).get(0) === String(total),
      'all committed',
    );
    // Exactly once each, in partition order.
    expect(handled).toEqual(Array.from({ length: total }, (_, n) => n));
  });

  it('a replica stopping (SIGTERM) with a message in flight: a hint produced to its partition meanwhile is handled once, by the other replica; the in-flight one once, by the stopping one', async () => {
    // Issue #38 item c: a verified callback (a hint) arriving while its partition's replica
    // shuts down must not be lost, nor handled by the replica going away after its stop began.
    const topic = uniqueName('handover');
    const groupId = uniqueName('handover-group');
    const handled: Array<{ id: string; by: string; partition: number }> = [];
    const held = gate();
    const reachedHeld = gate();
    const handlerOf = (by: string) =>
      defineHandler(topic, Payload, async (m) => {
        handled.push({ id: m.value.id, by, partition: m.partition });
        if (m.value.id === 'in-flight') {
          reachedHeld.open();
          await held.promise;
        }
      });
    const root = { topicPartitions: 2 };
    const stopping = await start({ groupId, handlers: [handlerOf('stopping')] }, root);
    await start({ groupId, handlers: [handlerOf('other')] }, root);
    // Whose partition is whose now that both joined: one message to each.
    await produceRaw(
      topic,
      [0, 1].map((partition) => ({ partition, value: json({ id: `probe-${partition}`, n: 0 }) })),
    );
    await waitFor(() => handled.length >= 2, 'a probe handled on each partition');
    const partition = handled.find((h) => h.by === 'stopping')?.partition;
    if (partition === undefined) throw new Error('the first replica kept no partition');

    await produceRaw(topic, [{ partition, value: json({ id: 'in-flight', n: 1 }) }]);
    await reachedHeld.promise;
    const closing = stopping.app.close();
    apps.splice(apps.indexOf(stopping), 1);
    await waitFor(
      () => stopping.runner.status.state === 'stopping',
      'the replica to start stopping',
    );
    await produceRaw(topic, [{ partition, value: json({ id: 'hint', n: 2 }) }]);
    held.open();
    await closing;
    await waitFor(() => handled.some((h) => h.id === 'hint'), 'the hint handled');
    await waitFor(
      async () => (await committedOffsets(groupId, topic)).get(partition) === '3',
      'the partition committed past the hint',
    );
    expect(handled.filter((h) => h.id === 'in-flight')).toEqual([
      { id: 'in-flight', by: 'stopping', partition },
    ]);
    expect(handled.filter((h) => h.id === 'hint')).toEqual([
      { id: 'hint', by: 'other', partition },
    ]);
  });

  it('a crashed consumer (dead-letter write impossible) fails its liveness check and commits nothing', async () => {
    const topic = uniqueName('crash');
    const groupId = uniqueName('crash-group');
    const calls: string[] = [];
    const { runner } = await start(
      {
        groupId,
        handlers: [defineHandler(topic, Payload, async (m) => void calls.push(m.value.id))],
      },
      { sendTimeoutMs: 3_000 },
    );
    expect(() => runner.liveness.check()).not.toThrow();
    expect(runner.liveness.name).toBe(`kafka-consumer:${groupId}`);

    // Make the DLQ unwritable: delete it (the producer never auto-creates topics).
    await withAdmin((admin) => admin.deleteTopics({ topics: [dlqTopicFor(topic)] }));
    await waitFor(
      async () => !(await withAdmin((admin) => admin.listTopics())).includes(dlqTopicFor(topic)),
      'the DLQ topic to be deleted',
    );
    await produceRaw(topic, [{ key: 'k', value: Buffer.from('not json') }]);

    await waitFor(() => runner.status.state === 'crashed', 'the consumer to crash');
    expect(() => runner.liveness.check()).toThrow(
      /consumer crashed: dead-letter write to .*\.dlq failed/,
    );
    // Never lose a message: the poison message was not committed, so it will be redelivered.
    expect((await committedOffsets(groupId, topic)).get(0)).toBe('-1');
    expect(calls).toEqual([]);
  });

  it('the lag gauge reflects unconsumed messages and drops to 0 once they are handled', async () => {
    const topic = uniqueName('lag');
    const groupId = uniqueName('lag-group');
    const held = gate();
    const started = gate();
    const handled: number[] = [];
    const { runner } = await start({
      groupId,
      handlers: [
        defineHandler(topic, Payload, async (m) => {
          started.open();
          await held.promise;
          handled.push(m.value.n);
        }),
      ],
    });

    await produceRaw(
      topic,
      Array.from({ length: 10 }, (_, n) => ({ key: 'k', value: json({ id: `l-${n}`, n }) })),
    );
    await started.promise; // the first message is in the handler, nothing is committed yet

    expect((await runner.refreshLag()).get(topic)).toBe(10);
    expect(await metricValue(KAFKA_METRIC.lag, { group: groupId, topic })).toBe(10);

    held.open();
    await waitFor(() => handled.length === 10, 'all 10 handled');
    await waitFor(async () => (await runner.refreshLag()).get(topic) === 0, 'lag 0');
    expect(await metricValue(KAFKA_METRIC.lag, { group: groupId, topic })).toBe(0);
  });

  it('readiness: the broker check passes against the broker and fails against a closed port', async () => {
    const logger = memoryLogger();
    const options = { clientId: 'readiness', brokers: testBrokers(), healthCheckTimeoutMs: 5_000 };
    const up = new KafkaBrokerHealthCheck(options, logger);
    await expect(up.check()).resolves.toBeUndefined();
    await up.onApplicationShutdown();

    const downOptions = {
      clientId: 'readiness',
      brokers: ['127.0.0.1:1'],
      healthCheckTimeoutMs: 2_000,
      logLevel: 'nothing' as const,
    };
    const down = new KafkaBrokerHealthCheck(downOptions, logger);
    await expect(down.check()).rejects.toThrow(/./);
    await down.onApplicationShutdown();
  });
});
