/**
 * A handler whose database is failing over (issue #34): its failures say the database is
 * unavailable, not that the message is at fault. With `isUnavailable` the runner keeps trying past
 * the retry policy and the message is handled once the database is back; without it the same
 * failures exhaust the retries and dead-letter the message (what happened to gateway results while
 * a primary was being replaced).
 */
import { z } from 'zod';
import { defineHandler, dlqTopicFor } from '@payments/kafka';
import {
  committedOffsets,
  type KafkaTestApp,
  produceRaw,
  readMessages,
  startKafkaTestApp,
  uniqueName,
  waitFor,
} from '../../../test/support/kafka';

jest.setTimeout(120_000);

const Payload = z.object({ id: z.string() });
const UNAVAILABLE = Object.assign(new Error('no writable PostgreSQL primary'), {
  code: 'NO_WRITABLE_PRIMARY',
});

describe('libs/kafka: a handler whose database is unavailable', () => {
  let started: KafkaTestApp | undefined;

  afterEach(async () => {
    await started?.app.close();
    started = undefined;
  });

  /** A handler failing its first `failures` attempts as unavailable; `declares`: it says so. */
  async function run(declares: boolean, failures: number) {
    const topic = uniqueName('unavailable');
    const groupId = uniqueName('unavailable-group');
    const attempts: string[] = [];
    const handler = defineHandler(topic, Payload, async (m) => {
      attempts.push(m.value.id);
      if (attempts.length <= failures) throw UNAVAILABLE;
    });
    started = await startKafkaTestApp({
      groupId,
      retry: { retries: 2, initialDelayMs: 20, maxDelayMs: 50 },
      handlers: [
        declares
          ? { ...handler, isUnavailable: (error: unknown) => error === UNAVAILABLE }
          : handler,
      ],
    });
    await produceRaw(topic, [{ key: 'k', value: Buffer.from('{"id":"result-1"}') }]);
    await waitFor(
      async () => (await committedOffsets(groupId, topic)).get(0) === '1',
      'the offset committed',
    );
    return { topic, attempts };
  }

  it('declared unavailable: tried past the retries until it is handled, never dead-lettered', async () => {
    const { topic, attempts } = await run(true, 6);
    expect(attempts).toHaveLength(7);
    // Nothing on its dead-letter topic (reading one message there times out).
    await expect(readMessages(dlqTopicFor(topic), 1, 3_000)).rejects.toThrow();
  });

  it('not declared: the same failures exhaust the retries and dead-letter it', async () => {
    const { topic, attempts } = await run(false, 6);
    expect(attempts).toHaveLength(3);
    const [dead] = await readMessages(dlqTopicFor(topic), 1);
    expect(dead?.headers?.['dlq-reason']?.toString()).toBe('retries-exhausted');
  });
});
