import fc from 'fast-check';
import type { Producer, ProducerBatch, RecordMetadata } from 'kafkajs';
import { TimeoutError } from '@payments/core';
import { IdempotentSender, SenderClosedError } from './idempotent-sender';

/** A stand-in for a kafkajs producer: each sendBatch waits until the test answers it. */
class FakeProducer {
  readonly calls: Array<{
    batch: ProducerBatch;
    answer: (error?: Error) => void;
  }> = [];
  inFlight = 0;
  maxInFlight = 0;
  disconnected = false;

  connect = () => Promise.resolve();
  disconnect = () => {
    this.disconnected = true;
    return Promise.resolve();
  };
  sendBatch = (batch: ProducerBatch): Promise<RecordMetadata[]> => {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    return new Promise((resolve, reject) => {
      this.calls.push({
        batch,
        answer: (error) => {
          this.inFlight--;
          if (error) reject(error);
          else
            resolve(
              (batch.topicMessages ?? []).map((t) => ({
                topicName: t.topic,
                partition: 0,
                errorCode: 0,
              })),
            );
        },
      });
    });
  };
}

function senderWith(options: { maxBatchMessages?: number } = {}) {
  const producers: FakeProducer[] = [];
  const retired: number[] = [];
  const sender = new IdempotentSender(
    () => {
      const producer = new FakeProducer();
      producers.push(producer);
      return producer as unknown as Producer;
    },
    { ...options, hooks: { retired: (_error, messages) => retired.push(messages) } },
  );
  return { sender, producers, retired };
}

const flush = () => new Promise((resolve) => setImmediate(resolve));
const values = (call: { batch: ProducerBatch }) =>
  (call.batch.topicMessages ?? []).flatMap((t) =>
    t.messages.map((m) => `${t.topic}:${String(m.value)}`),
  );

describe('IdempotentSender', () => {
  it('sends several topics asked for together in one produce call, and fails them together', async () => {
    const { sender, producers } = senderWith();
    const together = sender.sendAll(
      [
        { topic: 'a', messages: [{ value: '1' }, { value: '2' }] },
        { topic: 'b', messages: [{ value: '3' }] },
        { topic: 'c', messages: [] },
      ],
      1_000,
    );
    await flush();
    const producer = producers[0];
    expect(producer.calls).toHaveLength(1);
    expect(values(producer.calls[0])).toEqual(['a:1', 'a:2', 'b:3']);
    // Acknowledged by every in-sync replica (acks=all): an acknowledgement must survive a leader.
    expect(producer.calls[0].batch.acks).toBe(-1);
    producer.calls[0].answer();
    expect((await together).map((m) => m.topicName)).toEqual(['a', 'b']);

    const failing = sender.sendAll(
      [
        { topic: 'a', messages: [{ value: '4' }] },
        { topic: 'b', messages: [{ value: '5' }] },
      ],
      1_000,
    );
    await flush();
    expect(producer.calls).toHaveLength(2);
    expect(values(producer.calls[1])).toEqual(['a:4', 'b:5']);
    producer.calls[1].answer(new Error('broker gone'));
    await expect(failing).rejects.toThrow('broker gone');
  });

  it('has one produce call in flight at a time and sends what waited in one call, in arrival order', async () => {
    const { sender, producers } = senderWith();
    const first = sender.send('a', [{ value: '1' }], 1_000);
    await flush();
    const waiting = [
      sender.send('b', [{ value: '2' }], 1_000),
      sender.send('a', [{ value: '3' }, { value: '4' }], 1_000),
      sender.send('b', [{ value: '5' }], 1_000),
    ];
    await flush();
    const producer = producers[0];
    expect(producer.calls).toHaveLength(1);
    producer.calls[0].answer();
    await first;
    await flush();
    expect(producer.calls).toHaveLength(2);
    // Topics in the order they first came, each topic's messages in the order asked for (kafkajs
    // keeps it per partition).
    expect(values(producer.calls[1])).toEqual(['b:2', 'b:5', 'a:3', 'a:4']);
    producer.calls[1].answer();
    const answers = await Promise.all(waiting);
    expect(answers.map((metadata) => metadata.map((m) => m.topicName))).toEqual([
      ['b'],
      ['a'],
      ['b'],
    ]);
    expect(producer.maxInFlight).toBe(1);
  });

  it('a failed call fails every send in it, retires the producer and the next call goes out on a new one', async () => {
    const { sender, producers, retired } = senderWith();
    const failing = sender.send('a', [{ value: '1' }, { value: '2' }], 1_000);
    await flush();
    producers[0].calls[0].answer(new Error('connection closed'));
    await expect(failing).rejects.toThrow('connection closed');
    expect(retired).toEqual([2]);
    expect(producers[0].disconnected).toBe(true);

    const next = sender.send('a', [{ value: '3' }], 1_000);
    await flush();
    expect(producers).toHaveLength(2);
    expect(producers[0].calls).toHaveLength(1);
    expect(values(producers[1].calls[0])).toEqual(['a:3']);
    producers[1].calls[0].answer();
    await expect(next).resolves.toHaveLength(1);
  });

  it('a call in flight past the earliest deadline of its sends times out and retires the producer', async () => {
    const { sender, producers, retired } = senderWith();
    const send = sender.send('a', [{ value: '1' }], 20);
    await expect(send).rejects.toBeInstanceOf(TimeoutError);
    expect(retired).toEqual([1]);
    expect(producers).toHaveLength(2);
  });

  it('a send still waiting when its deadline passes is dropped unsent; the others go on', async () => {
    const { sender, producers, retired } = senderWith();
    const first = sender.send('a', [{ value: '1' }], 5_000);
    await flush();
    const impatient = sender.send('a', [{ value: '2' }], 20);
    const patient = sender.send('a', [{ value: '3' }], 5_000);
    await expect(impatient).rejects.toThrow('not sent within 20 ms');
    producers[0].calls[0].answer();
    await first;
    await flush();
    expect(values(producers[0].calls[1])).toEqual(['a:3']);
    producers[0].calls[1].answer();
    await patient;
    expect(retired).toEqual([]);
  });

  it('coalesces at most maxBatchMessages, but never splits one send', async () => {
    const { sender, producers } = senderWith({ maxBatchMessages: 3 });
    const sends = [sender.send('a', [{ value: '0' }], 1_000)];
    await flush();
    sends.push(
      sender.send('a', [{ value: '1' }, { value: '2' }], 1_000),
      sender.send('a', [{ value: '3' }, { value: '4' }], 1_000),
      sender.send('a', [{ value: '5' }, { value: '6' }, { value: '7' }, { value: '8' }], 1_000),
    );
    const producer = producers[0];
    for (let call = 0; call < 4; call++) {
      await flush();
      producer.calls[call].answer();
    }
    await Promise.all(sends);
    expect(producer.calls.map(values)).toEqual([
      ['a:0'],
      ['a:1', 'a:2'],
      ['a:3', 'a:4'],
      ['a:5', 'a:6', 'a:7', 'a:8'],
    ]);
  });

  it('close sends what was asked for before it, then disconnects and refuses what comes after', async () => {
    const { sender, producers } = senderWith();
    const inFlight = sender.send('a', [{ value: '1' }], 1_000);
    await flush();
    const waiting = sender.send('a', [{ value: '2' }], 1_000);
    const closing = sender.close();
    producers[0].calls[0].answer();
    await inFlight;
    await flush();
    expect(producers[0].disconnected).toBe(false);
    producers[0].calls[1].answer();
    await closing;
    await expect(waiting).resolves.toHaveLength(1);
    await expect(sender.send('a', [{ value: '3' }], 1_000)).rejects.toBeInstanceOf(
      SenderClosedError,
    );
    expect(producers[0].disconnected).toBe(true);
  });

  it('refuses a batch limit below one', () => {
    expect(() => senderWith({ maxBatchMessages: 0 })).toThrow(RangeError);
  });

  it('property: no producer carries a call after one of its calls failed; every acknowledged message went out exactly once, in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            size: fc.integer({ min: 1, max: 4 }),
            fail: fc.boolean(),
            gap: fc.boolean(),
          }),
          { minLength: 1, maxLength: 25 },
        ),
        fc.integer({ min: 1, max: 6 }),
        async (plan, maxBatchMessages) => {
          const { sender, producers } = senderWith({ maxBatchMessages });
          let next = 0;
          const sends = plan.map(({ size }) => {
            const messages = Array.from({ length: size }, () => ({ value: String(next++) }));
            return {
              messages,
              result: sender.send('t', messages, 60_000).then(
                () => 'ok',
                () => 'failed',
              ),
            };
          });
          // Answer calls as they come: fail a call when the plan entry of its first message says so.
          const failedCalls = new Set<{ batch: ProducerBatch }>();
          for (let settled = 0; settled < 200; settled++) {
            await flush();
            const open = producers.flatMap((p) => p.calls).find((c) => !('done' in c));
            if (open === undefined) break;
            const first = Number(values(open)[0].slice(2));
            const entry =
              plan[sends.findIndex((s) => s.messages.some((m) => m.value === String(first)))];
            Object.assign(open, { done: true });
            if (entry.fail) failedCalls.add(open);
            open.answer(entry.fail ? new Error('lost') : undefined);
          }
          const results = await Promise.all(sends.map((s) => s.result));
          for (const producer of producers) {
            expect(producer.maxInFlight).toBeLessThanOrEqual(1);
            const failedAt = producer.calls.findIndex((c) => failedCalls.has(c));
            if (failedAt >= 0) expect(producer.calls).toHaveLength(failedAt + 1);
          }
          const delivered = producers
            .flatMap((p) => p.calls)
            .filter((c) => !failedCalls.has(c))
            .flatMap(values)
            .map((v) => Number(v.slice(2)));
          const acknowledged = sends
            .filter((_s, i) => results[i] === 'ok')
            .flatMap((s) => s.messages.map((m) => Number(m.value)));
          expect(delivered).toEqual(acknowledged);
        },
      ),
      { numRuns: 150 },
    );
  });
});
