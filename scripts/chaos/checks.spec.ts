import { randomUUID } from 'node:crypto';
import type { PaymentEvent } from '@payments/contracts';
import type { LedgerEntry, Movement } from '../stack/sandbox-controls';
import { checkRun, ObservedEvent, SentCommand } from './checks';

/**
 * The chaos verdict on hand-made streams: each zero line must be able to say "not zero".
 */
const USD = (minor: number) => ({ minor, currency: 'USD' });
const paymentId = randomUUID();
const commandId = randomUUID();
const saleRequest = randomUUID();
const at = '2026-11-23T10:00:00.000Z';
const base = { paymentId, commandId, occurredAt: at };

function observed(...events: Array<Record<string, unknown>>): ObservedEvent[] {
  return events.map((e, i) => ({
    event: { ...base, version: i + 1, ...e } as PaymentEvent,
    ceId: `ce-${i + 1}`,
  }));
}

function ledger(...moves: Array<[Movement, number, string?]>): LedgerEntry[] {
  return moves.map(([movement, amountMinor, orderId = '1'], i) => ({
    seq: i + 1,
    login: 'sandbox-merchant',
    clientOrderId: paymentId,
    orderId,
    movement,
    amountMinor,
    currency: 'USD',
  }));
}

const sale: SentCommand = { commandId, paymentId, type: 'sale', sentAt: Date.parse(at) };
const requested = {
  type: 'operation-requested',
  operation: 'sale',
  requestId: saleRequest,
  amount: USD(2_500),
  clientOrderId: paymentId,
};
const approved = { type: 'approved', requestId: saleRequest, amount: USD(2_500) };

function run(events: ObservedEvent[], entries: LedgerEntry[], commands = [sale]) {
  return checkRun({
    commands,
    events,
    ledger: entries,
    deliberatelyUnknown: new Set(),
    now: Date.parse(at) + 60_000,
  });
}

describe('checkRun', () => {
  it('passes an approved sale charged once', () => {
    const result = run(observed(requested, approved), ledger(['charged', 2_500]));
    expect(result).toMatchObject({
      paymentsFinal: 1,
      unknown: [],
      lost: [],
      doubleCharges: [],
      misreported: [],
      versionProblems: [],
    });
  });

  it('reports an approval the ledger does not show, and a decline the ledger does', () => {
    expect(run(observed(requested, approved), []).misreported).toHaveLength(1);
    const declined = { type: 'declined', operation: 'sale', requestId: saleRequest };
    expect(run(observed(requested, declined), ledger(['charged', 2_500])).misreported).toHaveLength(
      1,
    );
  });

  it('reports two charges for one sale, also on a second gateway order', () => {
    const twice = run(
      observed(requested, approved),
      ledger(['charged', 2_500], ['charged', 2_500, '2']),
    );
    expect(twice.doubleCharges.map((d) => d.detail)).toEqual([
      '2 × charged for 1 sale command(s)',
      'money moved on 2 gateway orders',
    ]);
  });

  it('reports a void of an open hold that released nothing at the gateway', () => {
    const preauthRequest = randomUUID();
    const voidRequest = randomUUID();
    const events = observed(
      { ...requested, operation: 'preauth', requestId: preauthRequest },
      { type: 'authorized', requestId: preauthRequest, amount: USD(2_500) },
      { ...requested, operation: 'void', requestId: voidRequest },
      { type: 'voided', requestId: voidRequest, amount: USD(2_500) },
    );
    const commands: SentCommand[] = [
      { ...sale, type: 'preauth' },
      { ...sale, commandId: randomUUID(), type: 'void' },
    ];
    expect(run(events, ledger(['authorized', 2_500]), commands).misreported).toHaveLength(1);
    expect(
      run(events, ledger(['authorized', 2_500], ['released', 2_500]), commands).misreported,
    ).toEqual([]);
  });

  it('reports a payment left unknown, with its age, and a command with no event', () => {
    const unknown = {
      type: 'outcome-unknown',
      operation: 'sale',
      requestId: saleRequest,
      since: at,
      alert: false,
    };
    const result = run(
      observed(requested, unknown),
      [],
      [sale, { ...sale, commandId: randomUUID(), type: 'void' }],
    );
    expect(result.unknown).toEqual([
      {
        paymentId,
        ageSeconds: 60,
        lastEvent: 'outcome-unknown',
        deliberate: false,
        alerted: false,
      },
    ]);
    expect(result.lost).toHaveLength(1);
  });

  it('tells a payment whose unknown outcome was raised for a person from a silent one', () => {
    const unknown = {
      type: 'outcome-unknown',
      operation: 'sale',
      requestId: saleRequest,
      since: at,
      alert: false,
    };
    const alerted = { ...unknown, alert: true, concern: 'no-trace' };
    expect(run(observed(requested, unknown, alerted), [], [sale]).unknown).toMatchObject([
      { paymentId, alerted: true, concern: 'no-trace' },
    ]);
    // Sent once more after the alert: silent again until something is said about the repeat.
    const resent = {
      type: 'operation-resent',
      operation: 'sale',
      requestId: saleRequest,
      attempt: 1000,
      unknownSince: at,
    };
    expect(run(observed(requested, unknown, alerted, resent), [], [sale]).unknown).toMatchObject([
      { paymentId, alerted: false },
    ]);
  });

  it('reports a missing version and one version under two ce_ids, not a redelivery', () => {
    const events = observed(requested, approved);
    expect(run([...events, events[0]], ledger(['charged', 2_500])).versionProblems).toEqual([]);
    expect(run([events[1]], ledger(['charged', 2_500])).versionProblems).toHaveLength(1);
    expect(
      run([...events, { ...events[1], ceId: 'other' }], ledger(['charged', 2_500])).versionProblems,
    ).toHaveLength(1);
  });
});
