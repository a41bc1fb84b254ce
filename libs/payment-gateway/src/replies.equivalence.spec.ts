import fc from 'fast-check';
import { legacyDecodeReplyBody, legacyParseReply } from '../test/legacy-replies';
import type { ReplyKind } from './catalogue';
import { decodeReplyBody, parseReply, type RawReply } from './replies';

/**
 * The reply decoder and parser against their previous version (test/legacy-replies.ts, the zod
 * schemas and object building as of b8c661d): the same replies accepted, the same refused, and
 * the same typed reply, key for key and in the same order, on every input tried.
 */
const KINDS: readonly ReplyKind[] = [
  'async-response',
  'async-form-response',
  'status-response',
  'create-card-ref-response',
  'get-card-info-response',
  'create-recurring-payment-response',
];
const HTTP = [200, 201, 204, 302, 400, 401, 404, 422, 500, 503];

/** Every field some reply kind reads, and a few it does not. */
const KEYS = [
  'type',
  'serial-number',
  'merchant-order-id',
  'paynet-order-id',
  'end-point-id',
  'status',
  'error-message',
  'error-code',
  'error_message',
  'error_code',
  'redirect-url',
  'amount',
  'currency',
  'html',
  'redirect-to',
  'threeds-method-url',
  'threeds-server-trans-id',
  'bin',
  'last-four-digits',
  'card-type',
  'approval-code',
  'card-ref-id',
  'transaction-type',
  'order-stage',
  'processor-rrn',
  'by-request-sn',
  'recurring-payment-id',
  'unq-card-ref-id',
  'card-printed-name',
  'expire-year',
  'expire-month',
  'result-3d',
  'payout-id',
  'transaction-id',
  'control',
  'orderid',
  'hello',
];
const TYPES = [
  ...KINDS,
  'validation-error',
  'error',
  'status',
  'ASYNC-RESPONSE',
  '',
  'something-else',
];
const STRINGS = [
  ...TYPES,
  'x',
  'approved',
  'APPROVED',
  ' declined ',
  'processing',
  'chain_declined',
  '10.42',
  '10.5',
  '1.234',
  '10.421',
  '500.00',
  '-1',
  '1e3',
  'USD',
  'KWD',
  'JPY',
  'XXX',
  '<form>',
];
/** Values a RawReply cannot hold by its type but a caller of the exported parser might pass. */
const NON_STRINGS: unknown[] = [undefined, null, 42, 0, true, {}, [], ['x']];

const stringValue = fc.oneof(fc.constantFrom(...STRINGS), fc.string({ maxLength: 12 }));
const anyValue = fc.oneof(
  { weight: 6, arbitrary: stringValue },
  { weight: 1, arbitrary: fc.constantFrom(...NON_STRINGS) },
);

function same(raw: Record<string, unknown>, kind: ReplyKind, status: number): void {
  const ours = parseReply(raw as RawReply, kind, status);
  const theirs = legacyParseReply(raw as RawReply, kind, status);
  expect(ours).toStrictEqual(theirs);
  expect(JSON.stringify(ours)).toBe(JSON.stringify(theirs));
}

describe('parseReply answers as the previous parser did', () => {
  it('on random replies (string and non-string values, any kind, any HTTP status)', () => {
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom(...KEYS), anyValue, { maxKeys: 14 }),
        fc.option(fc.constantFrom(...TYPES), { nil: undefined }),
        fc.constantFrom(...KINDS),
        fc.constantFrom(...HTTP),
        (fields, type, kind, status) => {
          same(type === undefined ? fields : { ...fields, type }, kind, status);
        },
      ),
      { numRuns: 4000 },
    );
  });

  it('on every field of a full reply made missing, empty or of the wrong type, one at a time', () => {
    for (const kind of KINDS) {
      for (const type of [kind, undefined, 'async-response', 'error', 'validation-error']) {
        const full: Record<string, unknown> = Object.fromEntries(KEYS.map((k) => [k, `v-${k}`]));
        Object.assign(full, { status: 'approved', amount: '10.42', currency: 'USD' });
        if (type === undefined) delete full.type;
        else full.type = type;
        for (const status of [200, 400, 500]) {
          same(full, kind, status);
          for (const key of KEYS) {
            const { [key]: _dropped, ...missing } = full;
            same(missing, kind, status);
            for (const bad of ['', ...NON_STRINGS]) same({ ...full, [key]: bad }, kind, status);
          }
        }
      }
    }
  });
});

describe('decodeReplyBody answers as the previous decoder did', () => {
  const formKey = fc.oneof(
    fc.constantFrom(...KEYS, '__proto__', 'constructor', 'a b', 'a+b', 'a%2Bb', '[x]'),
    fc.string({ maxLength: 6 }),
  );
  const formValue = fc.oneof(
    stringValue,
    fc.constantFrom('a+b', '%21', '%E0%A4%A', '%', '=', '\r\n'),
  );
  const encode = (s: string, how: number) =>
    how === 0 ? s : how === 1 ? encodeURIComponent(s) : encodeURIComponent(s).replace(/%20/g, '+');

  it('on form bodies (encoded or not, line breaks around values, empty pairs)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.tuple(
            formKey,
            formValue,
            fc.integer({ min: 0, max: 2 }),
            fc.constantFrom('', '\n', '\r\n', '\n\n'),
          ),
          { maxLength: 8 },
        ),
        fc.constantFrom('', '&', '\n', '  '),
        (pairs, tail) => {
          const body =
            pairs.map(([k, v, how, nl]) => `${encode(k, how)}=${encode(v, how)}${nl}`).join('&') +
            tail;
          expect(decodeReplyBody(body)).toStrictEqual(legacyDecodeReplyBody(body));
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('on JSON bodies (strings, numbers, booleans, nulls, nested values) and on any text', () => {
    const json = fc.dictionary(
      fc.oneof(fc.constantFrom(...KEYS), fc.string({ maxLength: 6 })),
      fc.oneof(
        stringValue,
        fc.integer(),
        fc.double(),
        fc.boolean(),
        fc.constant(null),
        fc.jsonValue({ maxDepth: 2 }),
      ),
      { maxKeys: 10 },
    );
    fc.assert(
      fc.property(json, fc.constantFrom('', ' ', '\n'), (o, pad) => {
        const body = `${pad}${JSON.stringify(o)}${pad}`;
        expect(decodeReplyBody(body)).toStrictEqual(legacyDecodeReplyBody(body));
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (body) => {
        expect(decodeReplyBody(body)).toStrictEqual(legacyDecodeReplyBody(body));
      }),
      { numRuns: 2000 },
    );
    for (const body of [
      '',
      '   ',
      'hello',
      '<html>=</html>',
      '[1]',
      '{"a":',
      'a=%E0%A4%A',
      '{}',
      'null',
      '{"__proto__":"x"}',
      '{"constructor":1}',
      '=x',
      'a=1&&b=2',
      '__proto__=x',
      'a=1&__proto__=2',
      'constructor=1',
      '\n&\r\n&',
      '=&a=1',
    ]) {
      expect(decodeReplyBody(body)).toStrictEqual(legacyDecodeReplyBody(body));
    }
  });
});
