/**
 * Batch mode (handlers with `handleBatch`) against the real broker: consecutive messages of a
 * partition go to one call and are committed once; a chunk that does not decode or whose call
 * throws goes message by message through the usual path (retries, dead letters). Every message is
 * handled exactly once, in order. Handlers record what they completed in arrays, so a duplicate
 * would show.
 */
import { z } from 'zod';
import {
  type ConsumedMessage,
  dlqTopicFor,
  KAFKA_METRIC,
  type KafkaMessageHandler,
} from '@payments/kafka';
import {
  committedOffsets,
  createTopics,
  type KafkaTestApp,
  metricValue,
  produceRaw,
  readMessages,
  startKafkaTestApp,
  uniqueName,
  waitFor,
} from '../../../test/support/kafka';

jest.setTimeout(120_000);

const Payload = z.object({ n: z.number().int() });
type Payload = z.infer<typeof Payload>;

/** Completed work: one entry per call, the ns it handled; an "explode" n makes handleBatch throw. */
function recordingHandler(topic: string, explode: ReadonlySet<number> = new Set()) {
  const batches: number[][] = [];
  const singles: number[] = [];
  const handler: KafkaMessageHandler<Payload> = {
    topic,
    schema: Payload,
    handle: (m: ConsumedMessage<Payload>) => {
      singles.push(m.value.n);
      return Promise.resolve();
    },
    handleBatch: (messages: readonly ConsumedMessage<Payload>[]) => {
      const ns = messages.map((m) => m.value.n);
      // All or nothing: nothing is recorded when the batch fails.
      if (ns.some((n) => explode.has(n))) return Promise.reject(new Error('batch refused'));
      batches.push(ns);
      return Promise.resolve();
    },
  };
  return { handler, batches, singles, handled: () => [...batches.flat(), ...singles] };
}

const value = (n: number) => Buffer.from(JSON.stringify({ n }));

describe('libs/kafka batch mode', () => {
  let started: KafkaTestApp | undefined;
  afterEach(async () => {
    await started?.app.close();
    started = undefined;
  });

  it('hands consecutive messages to handleBatch (at most maxBatchMessages), in order, each once, one commit per batch', async () => {
    const topic = uniqueName('batch');
    const groupId = uniqueName('batch-group');
    await createTopics([topic], 1);
    // Written before the consumer starts, so its first fetch holds them all.
    await produceRaw(
      topic,
      Array.from({ length: 50 }, (_, n) => ({ key: 'k', value: value(n) })),
    );
    const recorder = recordingHandler(topic);
    started = await startKafkaTestApp({
      groupId,
      handlers: [recorder.handler],
      maxBatchMessages: 20,
    });
    await waitFor(
      async () => (await committedOffsets(groupId, topic)).get(0) === '50',
      'all 50 committed',
    );
    expect(recorder.handled()).toEqual(Array.from({ length: 50 }, (_, n) => n));
    expect(recorder.batches.length).toBeGreaterThanOrEqual(3);
    for (const batch of recorder.batches) expect(batch.length).toBeLessThanOrEqual(20);
    expect(recorder.batches.flat().length).toBeGreaterThan(recorder.singles.length);
    expect(await metricValue(KAFKA_METRIC.batches, { group: groupId, topic })).toBe(
      recorder.batches.length,
    );
    expect(await metricValue(KAFKA_METRIC.handled, { group: groupId, topic })).toBe(50);
  });

  it('a chunk with an undecodable message or a failing batch call goes one by one: the poison is dead-lettered, the rest handled once each', async () => {
    const topic = uniqueName('batch-fallback');
    const groupId = uniqueName('batch-fallback-group');
    await createTopics([topic], 1);
    const values: Buffer[] = [];
    for (let n = 0; n < 40; n++) values.push(n === 7 ? Buffer.from('{"n": broken') : value(n));
    await produceRaw(
      topic,
      values.map((v) => ({ key: 'k', value: v })),
    );
    const recorder = recordingHandler(topic, new Set([25]));
    started = await startKafkaTestApp({
      groupId,
      handlers: [recorder.handler],
      maxBatchMessages: 10,
    });
    await waitFor(
      async () => (await committedOffsets(groupId, topic)).get(0) === '40',
      'all 40 committed',
    );
    const good = Array.from({ length: 40 }, (_, n) => n).filter((n) => n !== 7);
    expect([...recorder.handled()].sort((a, b) => a - b)).toEqual(good);
    // 7 does not decode and 25 makes its batch fail: both chunks went one by one.
    expect(recorder.singles).toEqual(expect.arrayContaining([25]));
    expect(recorder.batches.flat()).not.toContain(25);
    expect(recorder.singles.filter((n) => n < 10)).toEqual(good.filter((n) => n < 10));
    const [dead] = await readMessages(dlqTopicFor(topic), 1);
    expect(dead?.value?.toString()).toBe('{"n": broken');
    expect(dead?.headers?.['dlq-reason']?.toString()).toBe('parse');
    expect(
      await metricValue(KAFKA_METRIC.batchFallbacks, { group: groupId, topic }),
    ).toBeGreaterThanOrEqual(1);
  });
});
