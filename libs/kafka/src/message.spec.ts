import { z } from 'zod';
import { decodeHeaders } from './headers';
import { decodeMessage, type RawMessage } from './message';
import { isNonRetriable, PoisonMessageError } from './errors';
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

  it('encodes objects as JSON and passes bytes and strings through', () => {
    expect(encodeValue({ a: 1 })).toBe('{"a":1}');
    const bytes = Buffer.from([0xff, 0x00]);
    expect(encodeValue(bytes)).toBe(bytes);
    expect(encodeValue('raw')).toBe('raw');
    expect(encodeValue(null)).toBeNull();
    expect(encodeValue(42)).toBe('42');
  });
});
