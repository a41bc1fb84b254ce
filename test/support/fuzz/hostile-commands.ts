/**
 * Hostile payment commands for the fuzz suites (test/fuzz/*.int-spec.ts, scripts/fuzz.ts):
 * fast-check arbitraries of *shapes*, turned into bytes with fresh ids at send time, so a seeded
 * run generates the same kinds of input on every run while its ids never collide with an earlier
 * run's on the shared broker.
 *
 * Each case says what the contract promises for it (apps/orchestrator/README.md "Commands",
 * libs/kafka/README.md "Commit policy"): a `command-rejected` event with one of the given reason
 * codes, or a dead letter (no ids to address a rejection to, not JSON), or either of the two where
 * the classification is libs/kafka's business (poison strings, deep nesting).
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { RejectionCode } from '@payments/contracts';
import { saleCommand } from '@payments/contracts/testing';

export const COMMAND_CLASSES = [
  'raw-bytes',
  'truncated-json',
  'not-an-object',
  'missing-ids',
  'wrong-types',
  'huge-strings',
  'prototype-keys',
  'deep-nesting',
  'bad-amounts',
  'card-data',
  'poison-strings',
  'unknown-payment',
  'conflicting-duplicate',
] as const;
export type CommandClass = (typeof COMMAND_CLASSES)[number];

export type Expectation =
  | { readonly outcome: 'rejected'; readonly reasons: readonly RejectionCode[] }
  | { readonly outcome: 'dead-letter' }
  | { readonly outcome: 'rejected-or-dead-letter'; readonly reasons: readonly RejectionCode[] };

/** One hostile message, ready to send. */
export interface HostileCommand {
  readonly class: CommandClass;
  /** What it is, in a few words (for reports and failure messages). */
  readonly label: string;
  /** Kafka key: the payment id when the case names one (as producers do), else a fresh UUID. */
  readonly key: string;
  readonly value: Buffer;
  /** The ids a rejection would be addressed to (undefined when the case has none). */
  readonly commandId?: string;
  readonly paymentId?: string;
  readonly expect: Expectation;
  /** Valid commands sent first, on the same key (the original of a conflicting duplicate). */
  readonly before: readonly Buffer[];
}

/** Fresh ids per built case. */
export interface CaseIds {
  readonly commandId: string;
  readonly paymentId: string;
}

export type CommandShape = fc.Arbitrary<(ids: CaseIds) => HostileCommand>;

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');
const text = (value: string): Buffer => Buffer.from(value, 'utf8');

function validSale(ids: CaseIds): Record<string, unknown> {
  return { ...saleCommand({ ...ids }), occurredAt: new Date().toISOString() };
}

/** JSON text of a valid sale with `inject` spliced in as the first member of `at` ('' = root). */
function spliced(ids: CaseIds, member: string, at: 'root' | 'order' = 'root'): string {
  const body = JSON.stringify(validSale(ids));
  return at === 'root'
    ? `{${member},${body.slice(1)}`
    : body.replace('"order":{', `"order":{${member},`);
}

const rejected = (...reasons: RejectionCode[]): Expectation => ({ outcome: 'rejected', reasons });
const deadLetter: Expectation = { outcome: 'dead-letter' };

function build(
  cls: CommandClass,
  label: string,
  value: (ids: CaseIds) => Buffer,
  expect: Expectation,
  addressable = true,
  before: (ids: CaseIds) => Buffer[] = () => [],
): (ids: CaseIds) => HostileCommand {
  return (ids) => ({
    class: cls,
    label,
    key: addressable ? ids.paymentId : randomUUID(),
    value: value(ids),
    ...(addressable ? { commandId: ids.commandId, paymentId: ids.paymentId } : {}),
    expect,
    before: before(ids),
  });
}

/** A Luhn-valid card number of 12-19 digits (the detector's range). */
export const cardNumber: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom('4', '51', '37', '6011', '35'),
    fc.integer({ min: 12, max: 19 }),
    fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 19, maxLength: 19 }),
  )
  .map(([prefix, length, digits]) => {
    const body = (prefix + digits.join('')).slice(0, length - 1);
    return body + luhnCheckDigit(body);
  })
  .filter((n) => !/^(\d)\1+$/.test(n));

function luhnCheckDigit(body: string): string {
  let sum = 0;
  for (let i = 0; i < body.length; i++) {
    let d = Number(body[body.length - 1 - i]);
    if (i % 2 === 0) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return String((10 - (sum % 10)) % 10);
}

/** The card written as it might appear: contiguous, grouped by spaces or dashes. */
const writtenCard = fc
  .tuple(cardNumber, fc.constantFrom('', ' ', '-'))
  .map(([n, sep]) => (sep === '' ? n : (n.match(/.{1,4}/g) ?? [n]).join(sep)));

const rawBytes: CommandShape = fc
  .uint8Array({ minLength: 1, maxLength: 2048 })
  .filter((bytes) => {
    // Random bytes that happen to be JSON are another class's business.
    try {
      JSON.parse(Buffer.from(bytes).toString('utf8'));
      return false;
    } catch {
      return true;
    }
  })
  .map((bytes) =>
    build('raw-bytes', `${bytes.length} random bytes`, () => Buffer.from(bytes), deadLetter, false),
  );

const truncatedJson: CommandShape = fc
  .double({ min: 0, max: 1, noNaN: true, maxExcluded: true })
  .map((cut) =>
    build(
      'truncated-json',
      `a sale cut at ${(cut * 100).toFixed(0)} %`,
      (ids) => {
        const full = JSON.stringify(validSale(ids));
        return text(full.slice(0, Math.floor(cut * (full.length - 1))));
      },
      deadLetter,
    ),
  );

const notAnObject: CommandShape = fc
  .oneof(
    fc.constant('null'),
    fc.constant('[]'),
    fc.integer().map(String),
    fc.string({ maxLength: 40 }).map((s) => JSON.stringify(s)),
    fc.constant('true'),
    fc.array(fc.integer(), { maxLength: 5 }).map((a) => JSON.stringify(a)),
  )
  .map((value) =>
    build('not-an-object', `the JSON ${value.slice(0, 30)}`, () => text(value), deadLetter, false),
  );

const ID_FIELDS = ['commandId', 'paymentId'] as const;
const missingIds: CommandShape = fc
  .tuple(
    fc.subarray([...ID_FIELDS], { minLength: 1 }),
    fc.oneof(fc.constant(undefined), fc.constant(null), fc.integer(), fc.string({ maxLength: 40 })),
  )
  .map(([fields, replacement]) =>
    build(
      'missing-ids',
      `${fields.join('+')} = ${JSON.stringify(replacement) ?? 'absent'}`,
      (ids) => {
        const body = validSale(ids);
        for (const field of fields) {
          if (replacement === undefined) delete body[field];
          else body[field] = replacement;
        }
        return json(body);
      },
      deadLetter,
      false,
    ),
  );

/** Fields of a sale a wrong type may replace (not the ids: that is `missing-ids`). */
const MUTABLE_PATHS = [
  ['merchant'],
  ['merchant', 'endpointId'],
  ['occurredAt'],
  ['amount'],
  ['amount', 'currency'],
  ['order'],
  ['order', 'description'],
  ['customer'],
  ['customer', 'email'],
  ['billingAddress', 'country'],
  ['redirectUrl'],
  ['sealedCard'],
] as const;

const wrongValue = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer({ min: -1000, max: 1000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }),
);

const wrongTypes: CommandShape = fc
  .tuple(fc.constantFrom(...MUTABLE_PATHS), wrongValue)
  .map(([path, replacement]) =>
    build(
      'wrong-types',
      `${path.join('.')} = ${JSON.stringify(replacement)}`,
      (ids) => {
        const body = validSale(ids);
        setPath(body, path, replacement);
        return json(body);
      },
      rejected('SCHEMA_INVALID'),
    ),
  );

const wrongCommandType: CommandShape = fc
  .oneof(fc.string({ maxLength: 64 }), fc.constantFrom('Sale', 'SALE', 'refund', 'capture ', ''))
  .filter((t) => !['sale', 'preauth', 'capture', 'void', 'return', 'refresh-status'].includes(t))
  .map((type) =>
    build(
      'wrong-types',
      `type = ${JSON.stringify(type)}`,
      (ids) => json({ ...validSale(ids), type }),
      rejected('UNKNOWN_TYPE', 'PLAIN_CARD_DATA'),
    ),
  );

function setPath(body: Record<string, unknown>, path: readonly string[], value: unknown): void {
  let at: Record<string, unknown> = body;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string, unknown>;
  at[path[path.length - 1]] = value;
}

/**
 * Strings far beyond any field's limit (65,535 characters at most), in a field of the contract or
 * an unknown one, of up to `maxBytes` UTF-8 bytes (the broker takes about 1 MB per message).
 */
export function hugeStrings(maxBytes: number): CommandShape {
  return fc
    .tuple(
      fc.integer({ min: 262_144, max: Math.max(262_144, maxBytes) }),
      fc.constantFrom('order.description', 'order.merchantData', 'customer.firstName', 'unknown'),
      fc.constantFrom('x', 'é', '€', '𝄞', ' '),
    )
    .map(([bytes, where, unit]) => {
      const count = Math.max(65_536, Math.floor(bytes / Buffer.byteLength(unit)));
      return build(
        'huge-strings',
        `${count} × "${unit}" in ${where}`,
        (ids) => {
          const body = validSale(ids);
          const big = unit.repeat(count);
          if (where === 'unknown') body.notes = big;
          else setPath(body, where.split('.'), big);
          return json(body);
        },
        rejected('SCHEMA_INVALID'),
      );
    });
}

const POLLUTION_MEMBERS = [
  '"__proto__":{"polluted":"yes"}',
  '"constructor":{"prototype":{"polluted":"yes"}}',
  '"__proto__":{"type":"sale","amount":{"minor":1,"currency":"EUR"}}',
  '"prototype":{"polluted":"yes"}',
  '"__proto__":null',
  '"hasOwnProperty":"nope"',
  '"toString":1',
];

const prototypeKeys: CommandShape = fc
  .tuple(fc.constantFrom(...POLLUTION_MEMBERS), fc.constantFrom('root' as const, 'order' as const))
  .map(([member, at]) =>
    build(
      'prototype-keys',
      `${member} in ${at}`,
      (ids) => text(spliced(ids, member, at)),
      rejected('SCHEMA_INVALID'),
    ),
  );

/** Nesting depths up to `maxDepth`, arrays or objects, at the root or in a field. */
export function deepNesting(maxDepth: number): CommandShape {
  return fc
    .tuple(
      fc.integer({ min: 100, max: Math.max(100, maxDepth) }),
      fc.constantFrom('array', 'object'),
    )
    .map(([depth, kind]) =>
      build(
        'deep-nesting',
        `${kind}s nested ${depth} deep in order`,
        (ids) => {
          const [open, close] = kind === 'array' ? ['[', ']'] : ['{"a":', '}'];
          return text(spliced(ids, `"deep":${open.repeat(depth)}1${close.repeat(depth)}`, 'order'));
        },
        { outcome: 'rejected-or-dead-letter', reasons: ['SCHEMA_INVALID'] },
      ),
    );
}

/** Amounts as JSON text (1e400 parses to Infinity, 2^53+1 loses precision). */
const BAD_MINORS = [
  '-1',
  '-100',
  '1.5',
  '0.01',
  '10.000001',
  '1e400',
  '-1e400',
  '9007199254740992',
  '9007199254740993',
  '1e21',
  '18446744073709551616',
  '"100"',
  'null',
  'true',
  '[100]',
  '{"value":100}',
];
const BAD_CURRENCIES = ['"eur"', '"EURO"', '"E1R"', '""', '978', 'null', '"€"'];

const badAmounts: CommandShape = fc
  .oneof(
    fc.constantFrom(...BAD_MINORS).map((minor) => ({ minor, currency: '"EUR"' })),
    fc.constantFrom(...BAD_CURRENCIES).map((currency) => ({ minor: '100', currency })),
    fc
      .double({ min: -1e6, max: 1e6, noNaN: true })
      .filter((d) => !Number.isInteger(d) || d < 0)
      .map((d) => ({ minor: JSON.stringify(d), currency: '"EUR"' })),
  )
  .chain(({ minor, currency }) =>
    fc.constantFrom('sale', 'capture', 'return').map((type) =>
      build(
        'bad-amounts',
        `${type} amount {minor: ${minor}, currency: ${currency}}`,
        (ids) => {
          const amount = `{"minor":${minor},"currency":${currency}}`;
          if (type === 'sale')
            return text(
              JSON.stringify(validSale(ids)).replace(/"amount":\{[^}]*\}/, `"amount":${amount}`),
            );
          return text(
            `{"type":"${type}","commandId":"${ids.commandId}","paymentId":"${ids.paymentId}","merchant":{"endpointId":"1234"},"occurredAt":"${new Date().toISOString()}","amount":${amount}}`,
          );
        },
        rejected('SCHEMA_INVALID'),
      ),
    ),
  );

const CARD_PLACES = [
  'description',
  'merchantData',
  'nested-unknown',
  'as-key',
  'as-type',
  'cvv-field',
  'in-array',
  'email-local-part',
  'deep-40',
] as const;

const cardData: CommandShape = fc
  .tuple(writtenCard, fc.constantFrom(...CARD_PLACES))
  .map(([card, place]) =>
    build(
      'card-data',
      `a card ${place}`,
      (ids) => {
        const body = validSale(ids);
        const order = body.order as Record<string, unknown>;
        switch (place) {
          case 'description':
            order.description = `Order for card ${card} thanks`;
            break;
          case 'merchantData':
            order.merchantData = card;
            break;
          case 'nested-unknown':
            body.extra = { payer: { note: { text: card } } };
            break;
          case 'as-key':
            order[card] = 'x';
            break;
          case 'as-type':
            body.type = card;
            break;
          case 'cvv-field':
            body.customer = { ...(body.customer as object), cvv: card.slice(-3) };
            break;
          case 'in-array':
            body.tags = ['a', card, 'b'];
            break;
          case 'email-local-part':
            body.customer = {
              ...(body.customer as object),
              email: `${card.replace(/\D/g, '')}@example.com`,
            };
            break;
          case 'deep-40': {
            let deep: unknown = card;
            for (let i = 0; i < 40; i++) deep = [deep];
            body.extra = deep;
            break;
          }
          default: {
            const never: never = place;
            throw new Error(`unknown place ${String(never)}`);
          }
        }
        return json(body);
      },
      rejected('PLAIN_CARD_DATA'),
    ),
  );

/** A card as a JSON number: a safe integer is found; above 2^53 it is a schema error. */
const cardAsNumber: CommandShape = cardNumber.map((card) =>
  build(
    'card-data',
    `a ${card.length}-digit card as a number`,
    (ids) => text(JSON.stringify(validSale(ids)).replace('"order":{', `"order":{"ref":${card},`)),
    rejected('PLAIN_CARD_DATA', 'SCHEMA_INVALID'),
  ),
);

/** NUL and lone surrogates (PostgreSQL refuses them in jsonb), escaped or raw. */
const poisonStrings: CommandShape = fc
  .tuple(
    fc.constantFrom('\\u0000', '\\ud800', '\\udfff', '\\ud83d', 'x\\u0000y'),
    fc.constantFrom('order.description', 'customer.firstName', 'billingAddress.city'),
  )
  .map(([escape, where]) =>
    build(
      'poison-strings',
      `"${escape}" in ${where}`,
      (ids) => {
        const marker = 'FUZZ-POISON-MARKER';
        const body = validSale(ids);
        setPath(body, where.split('.'), marker);
        return text(JSON.stringify(body).replace(marker, `a${escape}b`));
      },
      // A valid command apart from the string: libs/kafka dead-letters it (poison), or the
      // orchestrator's transaction fails on it and retries exhaust.
      deadLetter,
    ),
  );

const unknownPayment: CommandShape = fc
  .tuple(
    fc.constantFrom('capture', 'void', 'return', 'refresh-status'),
    fc.option(fc.integer({ min: 1, max: 1_000_000 }), { nil: undefined }),
  )
  .map(([type, minor]) =>
    build(
      'unknown-payment',
      `${type}${minor === undefined ? '' : ` of ${minor}`} for a payment that does not exist`,
      (ids) =>
        json({
          type,
          commandId: ids.commandId,
          paymentId: ids.paymentId,
          merchant: { endpointId: '1234' },
          occurredAt: new Date().toISOString(),
          ...(minor === undefined || type === 'refresh-status'
            ? {}
            : { amount: { minor, currency: 'EUR' } }),
        }),
      rejected('PAYMENT_NOT_FOUND', 'NOTHING_TO_REFRESH'),
    ),
  );

const conflictingDuplicate: CommandShape = fc
  .constantFrom('amount', 'description', 'type', 'merchant', 'capture')
  .map((change) =>
    build(
      'conflicting-duplicate',
      `the same command id with another ${change}`,
      (ids) => {
        const original = validSale(ids);
        const other: Record<string, unknown> = { ...original };
        if (change === 'amount') other.amount = { minor: 99_999, currency: 'EUR' };
        if (change === 'description') other.order = { description: 'another order' };
        if (change === 'type') other.type = 'preauth';
        if (change === 'merchant') other.merchant = { endpointId: '9999' };
        if (change === 'capture')
          return json({
            type: 'capture',
            commandId: ids.commandId,
            paymentId: ids.paymentId,
            merchant: original.merchant,
            occurredAt: original.occurredAt,
          });
        return json(other);
      },
      rejected('DUPLICATE_COMMAND_CONFLICT'),
      true,
      (ids) => [json(validSale(ids))],
    ),
  );

export interface HostileCommandOptions {
  /** Largest huge string in UTF-8 bytes (≤ 900,000 keeps a message under the broker's 1 MB). */
  readonly maxStringBytes?: number;
  /** Deepest nesting generated. */
  readonly maxDepth?: number;
}

/** Every class, each with equal weight. */
export function hostileCommandShapes(
  options: HostileCommandOptions = {},
): Record<CommandClass, CommandShape> {
  return {
    'raw-bytes': rawBytes,
    'truncated-json': truncatedJson,
    'not-an-object': notAnObject,
    'missing-ids': missingIds,
    'wrong-types': fc.oneof(wrongTypes, wrongCommandType),
    'huge-strings': hugeStrings(options.maxStringBytes ?? 900_000),
    'prototype-keys': prototypeKeys,
    'deep-nesting': deepNesting(options.maxDepth ?? 100_000),
    'bad-amounts': badAmounts,
    'card-data': fc.oneof(cardData, cardAsNumber),
    'poison-strings': poisonStrings,
    'unknown-payment': unknownPayment,
    'conflicting-duplicate': conflictingDuplicate,
  };
}

/**
 * `perClass` cases of every class (or the counts given), generated from `seed`, with fresh ids.
 */
export function hostileCommands(
  seed: number,
  counts: Partial<Record<CommandClass, number>> | number,
  options: HostileCommandOptions = {},
): HostileCommand[] {
  const shapes = hostileCommandShapes(options);
  const out: HostileCommand[] = [];
  COMMAND_CLASSES.forEach((cls, i) => {
    const count = typeof counts === 'number' ? counts : (counts[cls] ?? 0);
    if (count <= 0) return;
    for (const make of fc.sample(shapes[cls], { seed: seed + i, numRuns: count }))
      out.push(make({ commandId: randomUUID(), paymentId: randomUUID() }));
  });
  return out;
}

/** Shuffles in place with a seeded generator (so classes interleave on the partitions). */
export function shuffle<T>(items: T[], seed: number): T[] {
  let state = seed >>> 0 || 1;
  for (let i = items.length - 1; i > 0; i--) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    const j = (state >>> 0) % (i + 1);
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}

/** Consecutive groups of messages of at most `maxBytes` each (one producer request per group). */
export function batches<T extends { readonly value: Buffer }>(
  items: readonly T[],
  maxBytes = 700_000,
): T[][] {
  const out: T[][] = [];
  let current: T[] = [];
  let size = 0;
  for (const item of items) {
    if (current.length > 0 && size + item.value.length > maxBytes) {
      out.push(current);
      current = [];
      size = 0;
    }
    current.push(item);
    size += item.value.length;
  }
  if (current.length > 0) out.push(current);
  return out;
}
