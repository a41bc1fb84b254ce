import {
  buildDlqHeaders,
  DLQ_HEADER,
  dlqTopicFor,
  maskDlqBytes,
  MAX_DLQ_ERROR_LENGTH,
  sanitizeErrorText,
} from './dlq';

describe('dead-letter headers', () => {
  const origin = {
    reason: 'schema' as const,
    error: 'value does not match the schema: amount: expected number',
    topic: 'payments.commands.v1',
    partition: 3,
    offset: '9007199254740993',
    groupId: 'orchestrator',
  };

  it('names the DLQ topic after the original', () => {
    expect(dlqTopicFor('payments.commands.v1')).toBe('payments.commands.v1.dlq');
  });

  it('keeps the original headers and adds reason, error and original coordinates', () => {
    const original = {
      ce_id: Buffer.from('id-1'),
      traceparent: 'tp',
      multi: [Buffer.from('a'), Buffer.from('b')],
    };
    const headers = buildDlqHeaders(original, origin);
    expect(headers.ce_id).toEqual(Buffer.from('id-1'));
    expect(headers.traceparent).toBe('tp');
    expect(headers.multi).toEqual([Buffer.from('a'), Buffer.from('b')]);
    expect(headers[DLQ_HEADER.reason]).toBe('schema');
    expect(headers[DLQ_HEADER.error]).toBe(origin.error);
    expect(headers[DLQ_HEADER.originalTopic]).toBe('payments.commands.v1');
    expect(headers[DLQ_HEADER.originalPartition]).toBe('3');
    expect(headers[DLQ_HEADER.originalOffset]).toBe('9007199254740993');
    expect(headers[DLQ_HEADER.consumerGroup]).toBe('orchestrator');
  });

  it('replaces dlq headers of a re-driven record instead of keeping stale ones', () => {
    const headers = buildDlqHeaders({ 'dlq-reason': 'parse', 'dlq-original-offset': '1' }, origin);
    expect(headers['dlq-reason']).toBe('schema');
    expect(headers['dlq-original-offset']).toBe(origin.offset);
  });

  it('works without original headers and does not mutate them', () => {
    const original = { a: 'b' };
    buildDlqHeaders(original, origin);
    expect(original).toEqual({ a: 'b' });
    expect(Object.keys(buildDlqHeaders(undefined, origin)).sort()).toEqual(
      Object.values(DLQ_HEADER).sort(),
    );
  });

  it('masks card numbers, flattens lines and truncates the error text', () => {
    const text = sanitizeErrorText('card 4111111111111111 declined\nsecond line');
    expect(text).not.toContain('4111111111111111');
    expect(text).not.toContain('\n');
    const long = sanitizeErrorText('x'.repeat(5000));
    expect(long.length).toBe(MAX_DLQ_ERROR_LENGTH);
    expect(
      buildDlqHeaders(undefined, { ...origin, error: 'y'.repeat(5000) })[DLQ_HEADER.error],
    ).toHaveLength(MAX_DLQ_ERROR_LENGTH);
  });
});

describe('dead-letter values', () => {
  const card = '4111111111111111';

  it('keeps the original bytes when there is no card data', () => {
    const value = Buffer.from('{ "id" : "x",  "n": 1 }');
    expect(maskDlqBytes(value)).toBe(value);
    const broken = Buffer.from('{"id":"x", broken');
    expect(maskDlqBytes(broken)).toBe(broken);
    expect(maskDlqBytes(null)).toBeNull();
  });

  it('JSON: card numbers masked and CVV-like fields blanked, the rest kept', () => {
    const value = Buffer.from(
      JSON.stringify({ type: 'sale', card: { number: card, cvv: '123' }, securityCode: '321' }),
    );
    expect(JSON.parse(maskDlqBytes(value)?.toString() ?? 'null')).toEqual({
      type: 'sale',
      card: { number: '411111******1111', cvv: '' },
      securityCode: '',
    });
  });

  it('not JSON: masked as text; bytes that are not UTF-8 stay as they were around the card', () => {
    expect(maskDlqBytes(Buffer.from(`{"cvv2":"123","pan":"${card}", broken`))?.toString()).toBe(
      '{"cvv2":"","pan":"411111******1111", broken',
    );
    const binary = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from(` ${card} `),
      Buffer.from([0xc3]),
    ]);
    const masked = maskDlqBytes(binary);
    expect(masked?.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xfe]));
    expect(masked?.subarray(-1)).toEqual(Buffer.from([0xc3]));
    expect(masked?.toString('latin1')).toContain(' 411111******1111 ');
  });
});

// Found by the fuzz suite (test/fuzz/hostile-commands.int-spec.ts): a command nested 50,000 deep
// overflowed the stack while its dead letter was masked, the dead-letter write failed and the
// consumer crashed (liveness down, the partition blocked for good).
describe('maskDlqBytes on deeply nested values', () => {
  const nested = (depth: number, inner: string) => '['.repeat(depth) + inner + ']'.repeat(depth);

  it.each([100, 10_000, 50_000, 200_000])(
    '%i levels: masked as text, never a stack overflow',
    (depth) => {
      const bytes = Buffer.from(`{"order":{"deep":${nested(depth, '"4111111111111111"')}}}`);
      const masked = maskDlqBytes(bytes)?.toString('utf8') ?? '';
      expect(masked).not.toContain('4111111111111111');
      expect(masked).toContain('411111******1111');
      expect(masked.length).toBe(bytes.length);
    },
  );

  it('keeps the exact bytes of a deep value without card data', () => {
    const bytes = Buffer.from(`{"deep":${nested(100_000, '1')}}`);
    expect(maskDlqBytes(bytes)).toBe(bytes);
  });
});
