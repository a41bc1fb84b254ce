import fc from 'fast-check';
import {
  type DeadLetterRecord,
  describeDeadLetter,
  matches,
  REPLAYED_FROM_HEADER,
  replayOf,
} from './dead-letters';

const record = (over: Partial<DeadLetterRecord> = {}): DeadLetterRecord => ({
  topic: 'payments.commands.v1.dlq',
  partition: 2,
  offset: '17',
  timestamp: String(Date.parse('2026-11-24T10:00:00Z')),
  key: Buffer.from('pay-1'),
  value: Buffer.from('{"broken"'),
  headers: {
    'dlq-reason': 'parse',
    'dlq-error': 'Unexpected end of JSON input',
    'dlq-original-topic': 'payments.commands.v1',
    'dlq-original-partition': '2',
    'dlq-original-offset': '40',
    'dlq-consumer-group': 'orchestrator',
    ce_id: Buffer.from('c-1'),
    'content-type': 'application/json',
  },
  ...over,
});

describe('dead letters', () => {
  it('describes a record from its dlq-* headers', () => {
    expect(describeDeadLetter(record())).toMatchObject({
      at: 'payments.commands.v1.dlq/2/17',
      time: '2026-11-24T10:00:00.000Z',
      key: 'pay-1',
      reason: 'parse',
      originalTopic: 'payments.commands.v1',
      originalOffset: '40',
      consumerGroup: 'orchestrator',
      bytes: 9,
      replayedFrom: undefined,
    });
  });

  it('filters by reason, original topic, key and time; an empty filter takes all', () => {
    const letter = describeDeadLetter(record());
    expect(matches(letter, {})).toBe(true);
    expect(matches(letter, { reasons: ['schema'] })).toBe(false);
    expect(matches(letter, { reasons: ['schema', 'parse'] })).toBe(true);
    expect(matches(letter, { originalTopics: ['payments.gateway-results.v1'] })).toBe(false);
    expect(matches(letter, { key: /^pay-/ })).toBe(true);
    expect(matches(letter, { key: /^pout-/ })).toBe(false);
    expect(matches(letter, { since: new Date('2026-11-24T10:00:00Z') })).toBe(true);
    expect(matches(letter, { since: new Date('2026-11-24T10:00:01Z') })).toBe(false);
    expect(matches(describeDeadLetter(record({ key: null })), { key: /.*/ })).toBe(false);
  });

  it('replays to the original topic with key, value and original headers, dlq-* dropped, the source named', () => {
    const replay = replayOf(record());
    expect(replay).toEqual({
      topic: 'payments.commands.v1',
      key: Buffer.from('pay-1'),
      value: Buffer.from('{"broken"'),
      headers: {
        ce_id: Buffer.from('c-1'),
        'content-type': 'application/json',
        [REPLAYED_FROM_HEADER]: 'payments.commands.v1.dlq/2/17',
      },
    });
  });

  it('refuses a record without an original topic or whose origin is a dead-letter topic', () => {
    const { 'dlq-original-topic': _, ...noOrigin } = record().headers;
    expect(replayOf(record({ headers: noOrigin }))).toEqual({
      refused: 'no dlq-original-topic header',
    });
    expect(
      replayOf(record({ headers: { ...record().headers, 'dlq-original-topic': 'x.dlq' } })),
    ).toEqual({ refused: 'the original topic x.dlq is a dead-letter topic' });
  });

  it('keeps a header named __proto__ (an own property, never the prototype)', () => {
    const headers = JSON.parse(
      '{"__proto__": "kept", "dlq-original-topic": "payments.commands.v1"}',
    ) as Record<string, string>;
    const replay = replayOf(record({ headers }));
    if ('refused' in replay) throw new Error(replay.refused);
    expect(Object.keys(replay.headers)).toContain('__proto__');
    expect(Object.getOwnPropertyDescriptor(replay.headers, '__proto__')?.value).toBe('kept');
  });

  it('property: a replay never carries a dlq-* header other than dlq-replayed-from, and keeps every other header', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.string({ minLength: 1, maxLength: 12 }), fc.string({ maxLength: 8 })),
        (extra) => {
          const headers = { ...extra, 'dlq-original-topic': 'payments.commands.v1' };
          const replay = replayOf(record({ headers }));
          if ('refused' in replay) return false;
          const names = Object.keys(replay.headers);
          const kept = Object.keys(extra).filter((n) => !n.startsWith('dlq-'));
          return (
            names.filter((n) => n.startsWith('dlq-')).join() === REPLAYED_FROM_HEADER &&
            kept.every((n) => replay.headers[n] === extra[n])
          );
        },
      ),
    );
  });
});
