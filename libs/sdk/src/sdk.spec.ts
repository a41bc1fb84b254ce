import { generateKeyPairSync } from 'node:crypto';
import { ceType, open, toKafkaHeaders } from '@payments/contracts';
import { MERCHANT, PAYMENT_ID, saleCommand, testUuid } from '@payments/contracts/testing';
import { COMMAND_TYPES, EVENT_TYPES, sagaIdOf } from './catalogue';
import { EventSchemaMismatchError, InvalidCommandError } from './errors';
import { decodeEvent, EventGate, type EventMeta, MemorySeenStore } from './event-gate';
import { PaymentsProducer } from './producer';

const keys = generateKeyPairSync('rsa', { modulusLength: 2048 });
const publicPem = keys.publicKey.export({ type: 'spki', format: 'pem' }).toString();
const CARD = {
  number: '4444444444444448',
  expiryMonth: 12,
  expiryYear: 2030,
  cvv: '123',
  holderName: 'JANE DOE',
};

function producer(): PaymentsProducer {
  return new PaymentsProducer({
    brokers: ['127.0.0.1:1'],
    source: '/test',
    cardSealingPublicKeyPem: publicPem,
    now: () => new Date('2026-11-23T10:00:00.000Z'),
  });
}

function approved(version: number, paymentId = PAYMENT_ID): Record<string, unknown> {
  return {
    type: 'approved',
    paymentId,
    commandId: testUuid(),
    version,
    occurredAt: '2026-11-23T10:00:01.000Z',
    requestId: testUuid(),
    amount: { minor: 2_500, currency: 'USD' },
  };
}

function record(value: unknown, id = testUuid(), type = ceType.event('approved')) {
  return {
    topic: 'payments.events.v1',
    partition: 0,
    offset: '7',
    value: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)),
    headers: toKafkaHeaders({
      id,
      type,
      source: '/payments/orchestrator',
      subject: PAYMENT_ID,
      time: '2026-11-23T10:00:01.000Z',
    }),
  };
}

describe('the catalogue', () => {
  it('offers every command a service may send and no orchestrator-internal one', () => {
    expect(COMMAND_TYPES).toEqual(
      expect.arrayContaining(['sale', 'capture', 'payout-check', 'create-schedule', 'rebill']),
    );
    for (const internal of [
      'reserve-payout-budget',
      'release-payout-budget',
      'payout-budget-answer',
      'record-cycle-outcome',
    ])
      expect(COMMAND_TYPES).not.toContain(internal);
  });

  it('reads every event family of the events topic', () => {
    expect(EVENT_TYPES).toEqual(
      expect.arrayContaining(['approved', 'declined', 'command-rejected']),
    );
    expect(EVENT_TYPES.some((t) => t.startsWith('payout'))).toBe(true);
    expect(EVENT_TYPES.some((t) => t.startsWith('schedule'))).toBe(true);
    expect(EVENT_TYPES.some((t) => t.startsWith('transfer'))).toBe(true);
  });
});

describe('sagaIdOf', () => {
  it("names an event's or command's saga by its family's field, not the first id it carries", () => {
    const [budgetId, payoutId, scheduleId, paymentId] = [
      testUuid(),
      testUuid(),
      testUuid(),
      testUuid(),
    ];
    expect(sagaIdOf({ type: 'payout-budget-reserved', budgetId, payoutId })).toBe(budgetId);
    expect(sagaIdOf({ type: 'cycle-charged', scheduleId, paymentId })).toBe(scheduleId);
    expect(sagaIdOf({ type: 'payout-budget-answer', budgetId, payoutId })).toBe(payoutId);
    expect(sagaIdOf({ type: 'command-rejected', scheduleId })).toBe(scheduleId);
    expect(sagaIdOf({ type: 'something-new', transferId: payoutId })).toBe(payoutId);
    expect(sagaIdOf({ type: 'approved' })).toBeUndefined();
  });
});

describe('PaymentsProducer.build', () => {
  it('fills ids and time, seals the card to the adapter key bound to the payment, and validates', () => {
    const { type: _t, commandId: _c, occurredAt: _o, sealedCard: _s, ...sale } = saleCommand();
    const command = producer().build('sale', { ...sale, card: CARD });
    expect(command).toMatchObject({
      type: 'sale',
      paymentId: PAYMENT_ID,
      occurredAt: '2026-11-23T10:00:00.000Z',
    });
    expect(command.commandId).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.stringify(command)).not.toContain(CARD.number);
    expect(open(command.sealedCard, keys.privateKey, PAYMENT_ID)).toEqual(CARD);
    expect(() => open(command.sealedCard, keys.privateKey, testUuid())).toThrow();
  });

  it('seals both cards of a transfer (source and destination), each bound to the transfer id', () => {
    const transferId = testUuid();
    const destination = { ...CARD, number: '4111111111111111', cvv: undefined };
    const command = producer().build('transfer', {
      transferId,
      merchant: MERCHANT,
      amount: { minor: 1_900, currency: 'USD' },
      card: CARD,
      destinationCard: {
        number: destination.number,
        expiryMonth: 12,
        expiryYear: 2030,
        holderName: 'JOHN ROE',
      },
    });
    expect(JSON.stringify(command)).not.toMatch(/4444444444444448|4111111111111111/);
    expect(open(command.sealedCard, keys.privateKey, transferId).number).toBe(CARD.number);
    expect(open(command.sealedDestinationCard, keys.privateKey, transferId).number).toBe(
      destination.number,
    );
  });

  it('refuses an invalid command before anything is sent, naming the fields', () => {
    const { type: _t, commandId: _c, occurredAt: _o, sealedCard: _s, ...sale } = saleCommand();
    const bad = { ...sale, card: CARD, amount: { minor: 10.5, currency: 'usd' } };
    expect(() => producer().build('sale', bad)).toThrow(InvalidCommandError);
    expect(() => producer().build('sale', bad)).toThrow(
      /amount\.minor.*amount\.currency|amount\.currency.*amount\.minor/s,
    );
  });

  it('refuses a command type the orchestrator keeps to itself', () => {
    expect(() =>
      producer().build('record-cycle-outcome' as 'capture', {
        paymentId: PAYMENT_ID,
        merchant: MERCHANT,
      }),
    ).toThrow(/unknown command type/);
  });
});

describe('decodeEvent', () => {
  it('reads an event with its CloudEvents attributes', () => {
    const id = testUuid();
    const { event, meta } = decodeEvent(record(approved(3), id));
    expect(event).toMatchObject({
      type: 'approved',
      version: 3,
      amount: { minor: 2_500, currency: 'USD' },
    });
    expect(meta).toMatchObject({ ceId: id, subject: PAYMENT_ID, partition: 0, offset: '7' });
  });

  it.each([
    [
      'an unknown type',
      { ...approved(1), type: 'refund-magic' },
      'UNKNOWN_TYPE',
      /upgrade @payments\/sdk/,
    ],
    [
      'a body its schema refuses',
      { ...approved(1), amount: { minor: -1, currency: 'USD' } },
      'SCHEMA_INVALID',
      /amount\.minor/,
    ],
    ['a value that is not JSON', '{not json', 'MALFORMED', /not JSON/],
  ])('says exactly why it cannot read %s', (_what, value, reason, message) => {
    let error: unknown;
    try {
      decodeEvent(record(value));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(EventSchemaMismatchError);
    expect((error as EventSchemaMismatchError).reason).toBe(reason);
    expect((error as Error).message).toMatch(message);
    expect((error as Error).message).toContain('payments.events.v1[0]@7');
  });

  it('refuses a record without CloudEvents headers', () => {
    expect(() => decodeEvent({ ...record(approved(1)), headers: {} })).toThrow(/BAD_HEADERS/);
  });
});

describe('EventGate', () => {
  const meta = (ceId: string): EventMeta => ({
    ceId,
    ceType: ceType.event('approved'),
    source: '/payments/orchestrator',
    subject: PAYMENT_ID,
    time: '2026-11-23T10:00:01.000Z',
    topic: 'payments.events.v1',
    partition: 0,
    offset: '1',
  });

  async function deliver(gate: EventGate, version: number, ceId: string, paymentId = PAYMENT_ID) {
    const { event } = decodeEvent(record(approved(version, paymentId), ceId));
    const verdict = await gate.judge(event, meta(ceId));
    if (verdict === 'deliver') await gate.delivered(event, meta(ceId));
    return verdict;
  }

  it('passes each event once by ce_id', async () => {
    const gate = new EventGate();
    expect(await deliver(gate, 1, 'a')).toBe('deliver');
    expect(await deliver(gate, 1, 'a')).toBe('duplicate');
  });

  it('never lets a saga go backwards, per saga', async () => {
    const gate = new EventGate();
    const other = testUuid();
    expect(await deliver(gate, 2, 'a')).toBe('deliver');
    expect(await deliver(gate, 1, 'b')).toBe('stale');
    expect(await deliver(gate, 2, 'c')).toBe('stale');
    expect(await deliver(gate, 1, 'd', other)).toBe('deliver');
    expect(await deliver(gate, 5, 'e')).toBe('deliver'); // a gap: started mid-stream
  });

  it('forgets the oldest ids beyond its capacity', () => {
    const seen = new MemorySeenStore(2);
    seen.add('a');
    seen.add('b');
    seen.add('c');
    expect([seen.has('a'), seen.has('b'), seen.has('c')]).toEqual([false, true, true]);
  });
});
