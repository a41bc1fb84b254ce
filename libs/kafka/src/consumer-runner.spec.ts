import { z } from 'zod';
import { indexHandlers, rebalanceCause, resolveConsumerSettings } from './consumer-runner';
import { keepRestarting, RestartBudget } from './consumer-settings';
import { defineHandler, isHandlerObject } from './handler';
import { kafkaJsLogCreator, type KafkaLogger } from './logger';
import { KafkaJSNonRetriableError, logLevel } from 'kafkajs';

describe('consumer settings', () => {
  it('prefers group options over client options over defaults', () => {
    const settings = resolveConsumerSettings(
      { partitionsConsumedConcurrently: 4, topicPartitions: 8 },
      { groupId: 'g', partitionsConsumedConcurrently: 2, retry: { retries: 1 } },
    );
    expect(settings.partitionsConsumedConcurrently).toBe(2);
    expect(settings.topicPartitions).toBe(8);
    expect(settings.retry).toMatchObject({ retries: 1, initialDelayMs: 200, maxDelayMs: 10_000 });
    expect(settings.autoStart).toBe(true);
  });

  it('rejects an invalid retry policy at configuration time', () => {
    expect(() =>
      resolveConsumerSettings({}, { groupId: 'g', retry: { initialDelayMs: 500, maxDelayMs: 10 } }),
    ).toThrow(/maxDelayMs/);
  });

  it('takes maxBatchMessages from the group (default 100) and refuses one below 1', () => {
    expect(resolveConsumerSettings({}, { groupId: 'g' }).maxBatchMessages).toBe(100);
    expect(
      resolveConsumerSettings({}, { groupId: 'g', maxBatchMessages: 7 }).maxBatchMessages,
    ).toBe(7);
    expect(() => resolveConsumerSettings({}, { groupId: 'g', maxBatchMessages: 0 })).toThrow(
      /maxBatchMessages must be a whole number >= 1, got 0/,
    );
  });
});

describe('handler registration', () => {
  const schema = z.object({ id: z.string() });
  const a = defineHandler('topic-a', schema, async () => undefined);
  const b = defineHandler('topic-b', schema, async () => undefined);

  it('indexes handlers by topic', () => {
    expect([...indexHandlers([a, b]).keys()]).toEqual(['topic-a', 'topic-b']);
  });

  it('refuses two handlers for one topic and an empty list', () => {
    expect(() => indexHandlers([a, { ...a }])).toThrow(/two handlers for topic topic-a/);
    expect(() => indexHandlers([])).toThrow(/at least one handler/);
  });

  it('tells handler objects from Nest tokens', () => {
    class SomeHandler {}
    expect(isHandlerObject(a)).toBe(true);
    expect(isHandlerObject(SomeHandler)).toBe(false);
    expect(isHandlerObject('token')).toBe(false);
  });
});

describe('kafkajs log routing', () => {
  it('sends kafkajs entries to the matching logger method with fields, without timestamp', () => {
    const calls: Array<[string, Record<string, unknown>, string]> = [];
    const record =
      (level: string) =>
      (obj: Record<string, unknown>, msg: string): void => {
        calls.push([level, obj, msg]);
      };
    const logger: KafkaLogger = {
      debug: record('debug'),
      info: record('info'),
      warn: record('warn'),
      error: record('error'),
    };
    const log = kafkaJsLogCreator(logger)(logLevel.INFO);
    log({
      namespace: 'Consumer',
      level: logLevel.ERROR,
      label: 'ERROR',
      log: { message: 'Crash', timestamp: 'now', logger: 'kafkajs', groupId: 'g' },
    });
    log({
      namespace: 'Runner',
      level: logLevel.DEBUG,
      label: 'DEBUG',
      log: { message: 'fetch', timestamp: 't' },
    });
    expect(calls).toEqual([
      ['error', { groupId: 'g', component: 'kafkajs', namespace: 'Consumer' }, 'Crash'],
      ['debug', { component: 'kafkajs', namespace: 'Runner' }, 'fetch'],
    ]);
  });
});

describe('keepRestarting', () => {
  const settings = { maxRestarts: 3, restartWindowMs: 120_000 };
  const t0 = Date.parse('2026-11-27T12:00:00Z');

  it('restarts while restarts are left, however soon', () => {
    expect(keepRestarting(3, t0, t0 + 1_000, settings)).toBe(true);
  });

  it('keeps restarting past the count while the window since the first crash is open (a broker slow to come back)', () => {
    expect(keepRestarting(4, t0, t0 + 40_000, settings)).toBe(true);
    expect(keepRestarting(9, t0, t0 + 119_999, settings)).toBe(true);
  });

  it('gives up once both the count and the window are spent', () => {
    expect(keepRestarting(4, t0, t0 + 120_000, settings)).toBe(false);
  });

  it('counts crashes from the first since the last group join; a join starts afresh', () => {
    const budget = new RestartBudget(settings);
    for (let n = 0; n < 4; n++) expect(budget.crashed(t0 + n * 1_000).restart).toBe(true);
    expect(budget.crashed(t0 + 120_000)).toEqual({
      restart: false,
      restarts: 4,
      secondsSinceFirstCrash: 120,
    });
    budget.joined();
    expect(budget.crashed(t0 + 200_000).restart).toBe(true);
  });

  it('defaults to three restarts and a two-minute window', () => {
    expect(resolveConsumerSettings({}, { groupId: 'g' })).toMatchObject(settings);
  });
});

describe('rebalanceCause', () => {
  it('recognises the group moving on, also when kafkajs re-wrapped it keeping only the message', () => {
    const wrapped = new KafkaJSNonRetriableError(
      new Error('Specified group generation id is not valid'),
    );
    expect(rebalanceCause(wrapped)).toMatchObject({ type: 'ILLEGAL_GENERATION', code: 22 });
    const direct = Object.assign(new Error('x'), { type: 'REBALANCE_IN_PROGRESS' });
    expect(rebalanceCause(direct)).toMatchObject({ type: 'REBALANCE_IN_PROGRESS' });
    expect(rebalanceCause(new KafkaJSNonRetriableError(new Error('Invalid topic x')))).toBe(
      undefined,
    );
    expect(
      rebalanceCause(
        new KafkaJSNonRetriableError(new Error('The coordinator is not aware of this member')),
      ),
    ).toMatchObject({ type: 'UNKNOWN_MEMBER_ID', code: 25 });
    expect(rebalanceCause('not an error')).toBeUndefined();
  });

  it('answers a coordinator still loading or away after a broker restart by finding it again', () => {
    const loading = new KafkaJSNonRetriableError(
      new Error("The coordinator is loading and hence can't process requests for this group"),
    );
    expect(rebalanceCause(loading)).toMatchObject({ type: 'NOT_COORDINATOR_FOR_GROUP', code: 16 });
    const away = Object.assign(new Error('x'), { type: 'GROUP_COORDINATOR_NOT_AVAILABLE' });
    const spent = Object.assign(new KafkaJSNonRetriableError(new Error('retries spent')), {
      cause: away,
    });
    expect(rebalanceCause(spent)).toMatchObject({ type: 'NOT_COORDINATOR_FOR_GROUP' });
  });
});
