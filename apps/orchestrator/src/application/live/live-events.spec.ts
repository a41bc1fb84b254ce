import { liveEventOf, MinuteCounts } from './live-events';

const SAGA = '6f1c1a43-0000-4000-8000-000000000001';

function record(body: Record<string, unknown>): Buffer {
  return Buffer.from(JSON.stringify(body));
}

describe('liveEventOf', () => {
  it('copies only the whitelisted fields: a card summary or gateway order id never reaches a stream', () => {
    const event = liveEventOf(
      2,
      '41',
      record({
        type: 'approved',
        paymentId: SAGA,
        commandId: SAGA,
        version: 3,
        occurredAt: '2026-11-27T10:00:05.000Z',
        requestId: SAGA,
        amount: { minor: 1999, currency: 'EUR' },
        gatewayOrderId: 'gw-77',
        card: { bin: '411111', lastFour: '1111', brand: 'visa' },
      }),
    );
    expect(event).toEqual({
      id: '2-41',
      type: 'approved',
      sagaId: SAGA,
      version: 3,
      occurredAt: '2026-11-27T10:00:05.000Z',
      amount: { minor: 1999, currency: 'EUR' },
      moneyMoved: true,
    });
    expect(JSON.stringify(event)).not.toMatch(/411111|1111|visa|gw-77/);
  });

  it('names the saga of every flow and says which events moved money', () => {
    const base = { commandId: SAGA, version: 1, occurredAt: '2026-11-27T10:00:00.000Z' };
    const amount = { minor: 500, currency: 'USD' };
    expect(
      liveEventOf(0, '1', record({ ...base, type: 'paid-out', payoutId: SAGA, amount })),
    ).toMatchObject({ sagaId: SAGA, moneyMoved: true });
    expect(
      liveEventOf(0, '2', record({ ...base, type: 'authorized', paymentId: SAGA, amount })),
    ).toMatchObject({ moneyMoved: false, amount });
    expect(
      liveEventOf(0, '3', record({ ...base, type: 'declined', transferId: SAGA })),
    ).toMatchObject({ sagaId: SAGA, amount: null, moneyMoved: false });
  });

  it('skips what is not an event of a saga, and a float or negative amount is no amount', () => {
    expect(liveEventOf(0, '1', null)).toBeUndefined();
    expect(liveEventOf(0, '1', Buffer.from('not json'))).toBeUndefined();
    expect(
      liveEventOf(0, '1', record({ type: 'x', version: 1, occurredAt: 'now' })),
    ).toBeUndefined();
    const base = {
      type: 'approved',
      paymentId: SAGA,
      version: 1,
      occurredAt: '2026-11-27T10:00:00Z',
    };
    expect(
      liveEventOf(0, '1', record({ ...base, amount: { minor: 1.5, currency: 'USD' } })),
    ).toMatchObject({ amount: null, moneyMoved: false });
    expect(
      liveEventOf(0, '1', record({ ...base, amount: { minor: -5, currency: 'USD' } })),
    ).toMatchObject({ amount: null, moneyMoved: false });
  });
});

describe('MinuteCounts', () => {
  const at = (iso: string, type: string, minor?: number, currency = 'USD') =>
    liveEventOf(
      0,
      '1',
      record({
        type,
        paymentId: SAGA,
        version: 1,
        occurredAt: iso,
        ...(minor === undefined ? {} : { amount: { minor, currency } }),
      }),
    )!;

  it('counts events and money moved per minute of the events own time, zeros in between', () => {
    const counts = new MinuteCounts(new Date('2026-11-27T09:00:00Z'));
    counts.record(at('2026-11-27T10:00:05Z', 'approved', 1000));
    counts.record(at('2026-11-27T10:00:59Z', 'returned', 250));
    counts.record(at('2026-11-27T10:00:30Z', 'authorized', 9999));
    counts.record(at('2026-11-27T10:02:00Z', 'paid-out', 70, 'EUR'));
    const window = counts.window(new Date('2026-11-27T10:02:30Z'), 3);
    expect(window).toEqual({
      since: '2026-11-27T09:00:00.000Z',
      minutes: [
        { minute: '2026-11-27T10:00:00.000Z', events: 3, moved: { USD: 1250 } },
        { minute: '2026-11-27T10:01:00.000Z', events: 0, moved: {} },
        { minute: '2026-11-27T10:02:00.000Z', events: 1, moved: { EUR: 70 } },
      ],
    });
  });

  it('forgets minutes older than it keeps', () => {
    const counts = new MinuteCounts(new Date('2026-11-27T09:00:00Z'), 2);
    counts.record(at('2026-11-27T10:00:00Z', 'approved', 1));
    counts.record(at('2026-11-27T10:05:00Z', 'approved', 2));
    expect(counts.window(new Date('2026-11-27T10:00:10Z'), 2).minutes[1]).toMatchObject({
      events: 0,
    });
  });
});
