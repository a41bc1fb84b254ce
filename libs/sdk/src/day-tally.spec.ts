import type { DayClosedEvent } from '@payments/contracts';
import type { OutcomeEvent } from './catalogue';
import { DayTally } from './day-tally';

const ENDPOINT = '1111';
const DAY = {
  type: 'day-closed',
  closeId: '00000000-0000-4000-8000-00000000c105',
  merchant: { endpointId: ENDPOINT },
  day: '2026-11-28',
  timeZone: 'Europe/Berlin',
  from: '2026-11-27T23:00:00.000Z',
  to: '2026-11-28T23:00:00.000Z',
  occurredAt: '2026-11-28T23:05:00.000Z',
} as const;

const paymentId = (n: number) => `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;

function requested(n: number): OutcomeEvent {
  return {
    type: 'operation-requested',
    paymentId: paymentId(n),
    commandId: paymentId(1000 + n),
    version: 1,
    occurredAt: '2026-11-28T10:00:00.000Z',
    operation: 'sale',
    requestId: paymentId(2000 + n),
    amount: { minor: 1_000 * n, currency: 'EUR' },
    clientOrderId: `o-${n}`,
    merchant: { endpointId: ENDPOINT },
  };
}

function approved(n: number, seq: number, at = '2026-11-28T10:00:01.000Z'): OutcomeEvent {
  return {
    type: 'approved',
    paymentId: paymentId(n),
    commandId: paymentId(1000 + n),
    version: 2,
    occurredAt: at,
    requestId: paymentId(2000 + n),
    amount: { minor: 1_000 * n, currency: 'EUR' },
    merchantSeq: seq,
  };
}

function closed(count: number, sumMinor: string, lastMerchantSeq: number): DayClosedEvent {
  return {
    ...DAY,
    totals: [{ eventType: 'approved', currency: 'EUR', count, sumMinor }],
    count,
    lastMerchantSeq,
  };
}

describe('DayTally (a consumer proves it received every money event of a day)', () => {
  it('agrees with a day-closed whose counts and sums equal what was received', () => {
    const tally = new DayTally();
    for (const n of [1, 2, 3]) {
      tally.add(requested(n));
      tally.add(approved(n, n));
    }
    tally.add(approved(2, 2)); // a duplicate delivery counts once
    expect(tally.check(closed(3, '6000', 3))).toEqual({
      ok: true,
      differences: [],
      missingSeqs: [],
      explanation: [],
    });
  });

  it('names the type and currency that differ, and the sequence number never received', () => {
    const tally = new DayTally();
    for (const n of [1, 2, 3]) tally.add(requested(n));
    tally.add(approved(1, 1));
    tally.add(approved(3, 3));
    const verdict = tally.check(closed(3, '6000', 3));
    expect(verdict.ok).toBe(false);
    expect(verdict.differences).toEqual([
      {
        eventType: 'approved',
        currency: 'EUR',
        expected: { count: 3, sumMinor: '6000' },
        received: { count: 2, sumMinor: '4000' },
      },
    ]);
    expect(verdict.missingSeqs).toEqual([2]);
    expect(verdict.explanation).toEqual([
      '2026-11-28 1111 approved EUR: day-closed says 3 (6000 minor), received 2 (4000 minor)',
      '1111: merchantSeq never received: 2',
    ]);
  });

  it('a lost last event is a gap up to lastMerchantSeq; events outside the day are not counted', () => {
    const tally = new DayTally();
    for (const n of [1, 2]) tally.add(requested(n));
    tally.add(approved(1, 1));
    tally.add(approved(2, 2, '2026-11-28T23:00:00.000Z')); // the next day in Berlin
    const verdict = tally.check(closed(1, '1000', 3));
    expect(verdict.differences).toEqual([]);
    expect(verdict.missingSeqs).toEqual([3]);
    expect(verdict.ok).toBe(false);
  });

  it('attributes a money event received before its saga is known once endpointOf tells it', () => {
    const tally = new DayTally();
    tally.add(approved(4, 1));
    expect(tally.check(closed(1, '4000', 1)).ok).toBe(false);
    tally.endpointOf(paymentId(4), ENDPOINT);
    expect(tally.check(closed(1, '4000', 1)).ok).toBe(true);
  });
});
