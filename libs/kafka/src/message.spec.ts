import { z } from 'zod';
import {
  KafkaJSConnectionError,
  KafkaJSNonRetriableError,
  KafkaJSRequestTimeoutError,
} from 'kafkajs';
import { decodeHeaders } from './headers';
import { decodeMessage, findUnstorableString, jsonNestingDepth, type RawMessage } from './message';
import { isNonRetriable, isStackOverflow, PoisonMessageError } from './errors';
import { encodeValue } from './producer.service';

const schema = z.object({ paymentId: z.string(), amount: z.number().int() });

function raw(value: Buffer | null, extra: Partial<RawMessage['message']> = {}): RawMessage {
  return {
    topic: 't',
    partition: 2,
    message: {
      key: Buffer.from('pay-1'),
      value,
      headers: {},
      offset: '41',
      timestamp: '1700000000000',
      ...extra,
    },
  };
}

describe('decodeMessage', () => {
  it('parses, validates and exposes coordinates, key and string headers', () => {
    const result = decodeMessage(
      raw(Buffer.from('{"paymentId":"p1","amount":125,"extra":true}'), {
        headers: { ce_id: Buffer.from('c-1'), plain: 'text' },
      }),
      schema,
    );
    expect(result).toEqual({
      ok: true,
      message: {
        topic: 't',
        partition: 2,
        offset: '41',
        key: 'pay-1',
        value: { paymentId: 'p1', amount: 125 },
        headers: { ce_id: 'c-1', plain: 'text' },
        timestamp: '1700000000000',
      },
    });
  });

  it('keeps a null key as null', () => {
    const result = decodeMessage(
      raw(Buffer.from('{"paymentId":"p","amount":1}'), { key: null }),
      schema,
    );
    expect(result.ok && result.message.key).toBeNull();
  });

  it('reports invalid JSON as a parse failure without echoing the value', () => {
    const result = decodeMessage(raw(Buffer.from('{"pan":"4111111111111111",')), schema);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toBe('parse');
    expect(result.error).toMatch(/not valid JSON/);
    expect(result.error).not.toContain('4111');
  });

  it('reports empty and null values as parse failures', () => {
    expect(decodeMessage(raw(null), schema)).toMatchObject({ ok: false, reason: 'parse' });
    expect(decodeMessage(raw(Buffer.alloc(0)), schema)).toMatchObject({
      ok: false,
      reason: 'parse',
    });
  });

  it('reports schema mismatches with the failing paths', () => {
    const result = decodeMessage(raw(Buffer.from('{"paymentId":7,"amount":1.5}')), schema);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.reason).toBe('schema');
    expect(result.error).toContain('paymentId:');
    expect(result.error).toContain('amount:');
  });

  it('treats valid JSON of the wrong type as a schema failure', () => {
    expect(decodeMessage(raw(Buffer.from('"just a string"')), schema)).toMatchObject({
      ok: false,
      reason: 'schema',
    });
  });
});

describe('decodeHeaders', () => {
  it('decodes buffers, keeps the last of repeated values and skips undefined', () => {
    expect(
      decodeHeaders({ a: Buffer.from('x'), b: [Buffer.from('1'), 'two'], c: undefined, d: [] }),
    ).toEqual({ a: 'x', b: 'two' });
    expect(decodeHeaders(undefined)).toEqual({});
  });
});

describe('errors and encoding', () => {
  it('classifies non-retriable errors', () => {
    expect(isNonRetriable(new PoisonMessageError('bad'))).toBe(true);
    expect(isNonRetriable(Object.assign(new Error('x'), { retriable: false }))).toBe(true);
    expect(isNonRetriable(new Error('timeout'))).toBe(false);
    expect(isNonRetriable(Object.assign(new Error('x'), { retriable: true }))).toBe(false);
    expect(isNonRetriable('string')).toBe(false);
  });

  it('never takes an unreachable broker for a poison message, even once kafkajs gave up on it', () => {
    // What kafkajs's retrier throws when its retries on a refused connection are spent.
    const refused = new KafkaJSConnectionError('Connection error: connect ECONNREFUSED');
    // (its typings omit the second argument that sets `cause`)
    const gaveUp = Object.assign(new KafkaJSNonRetriableError(refused), { cause: refused });
    expect(gaveUp.retriable).toBe(false);
    expect(isNonRetriable(gaveUp)).toBe(false);
    const timedOut = new KafkaJSRequestTimeoutError('Request Produce(key: 0) timed out');
    expect(
      isNonRetriable(Object.assign(new KafkaJSNonRetriableError(timedOut), { cause: timedOut })),
    ).toBe(false);
    // A refusal about the record itself stays non-retriable.
    expect(isNonRetriable(new KafkaJSNonRetriableError(new Error('Invalid topic x')))).toBe(true);
  });

  it('encodes objects as JSON and passes bytes and strings through', () => {
    expect(encodeValue({ a: 1 })).toBe('{"a":1}');
    const bytes = Buffer.from([0xff, 0x00]);
    expect(encodeValue(bytes)).toBe(bytes);
    expect(encodeValue('raw')).toBe('raw');
    expect(encodeValue(null)).toBeNull();
    expect(encodeValue(42)).toBe('42');
  });
});

describe('poison values', () => {
  const anything = z.object({ data: z.unknown() });
  const decode = (text: string, limits = { maxValueBytes: 1_000_000, maxDepth: 8 }) =>
    decodeMessage(raw(Buffer.from(text)), anything, limits);

  it('refuses values nested deeper than the limit before parsing them, whatever the depth', () => {
    expect(decode(`{"data":${'['.repeat(7)}${']'.repeat(7)}}`).ok).toBe(true);
    for (const depth of [8, 100_000]) {
      expect(decode(`{"data":${'['.repeat(depth)}${']'.repeat(depth)}}`)).toEqual({
        ok: false,
        reason: 'parse',
        error: 'value nests deeper than 8 levels of objects and arrays',
      });
    }
  });

  it('counts nesting outside strings only (brackets and escaped quotes inside strings do not count)', () => {
    expect(jsonNestingDepth('{"a":"[[[[{{{{\\"[[[[","b":[{}]}')).toBe(3);
    expect(jsonNestingDepth('[]')).toBe(1);
    expect(jsonNestingDepth('"x"')).toBe(0);
    expect(jsonNestingDepth('[[[[[[', 2)).toBe(3); // stops once past the limit
  });

  it('refuses values larger than the limit without parsing them', () => {
    const text = JSON.stringify({ data: 'x'.repeat(100) });
    expect(decode(text, { maxValueBytes: 50, maxDepth: 8 })).toEqual({
      ok: false,
      reason: 'parse',
      error: `value is ${Buffer.byteLength(text)} bytes, more than the limit of 50`,
    });
  });

  it.each([
    ['{"data":"a\\u0000b"}', 'a NUL character (\\u0000) at $.data'],
    ['{"data":{"k\\u0000":1}}', 'a NUL character (\\u0000) in a key at $.data'],
    ['{"data":[1,{"x y":["\\ud800"]}]}', 'a lone UTF-16 surrogate at $.data[1]["x y"][0]'],
    ['{"data":"\\udc00x"}', 'a lone UTF-16 surrogate at $.data'],
    ['{"data":"x\\ud83d"}', 'a lone UTF-16 surrogate at $.data'],
  ])('refuses strings PostgreSQL cannot store: %s', (text, where) => {
    expect(decode(text)).toEqual({ ok: false, reason: 'schema', error: `value contains ${where}` });
  });

  it('accepts surrogate pairs and ordinary control characters', () => {
    expect(findUnstorableString({ a: ['\ud83d\ude00', 'tab\there', { b: 'é' }] })).toBeUndefined();
    expect(decode('{"data":"\\ud83d\\ude00\\n"}').ok).toBe(true);
  });

  it('cuts long keys in the path', () => {
    const key = 'k'.repeat(100);
    expect(findUnstorableString({ [key]: '\u0000' })).toBe(
      `a NUL character (\\u0000) at $.${'k'.repeat(32)}…`,
    );
  });

  it('a schema that overflows the stack is a schema failure, not an exception', () => {
    const overflowing = z.unknown().transform(function recurse(v: unknown): unknown {
      return recurse(v);
    });
    expect(decodeMessage(raw(Buffer.from('{}')), overflowing)).toEqual({
      ok: false,
      reason: 'schema',
      error: 'validation failed: RangeError: Maximum call stack size exceeded',
    });
  });

  it('classifies a stack overflow as non-retriable', () => {
    const overflow = (() => {
      const recurse = (n: number): number => recurse(n + 1) + 1;
      try {
        recurse(0);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(isStackOverflow(overflow)).toBe(true);
    expect(isNonRetriable(overflow)).toBe(true);
    expect(isNonRetriable(new RangeError('Invalid array length'))).toBe(false);
  });
});
