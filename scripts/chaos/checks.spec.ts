import { randomUUID } from 'node:crypto';
import type { PaymentEvent, PayoutEvent, TransferEvent } from '@payments/contracts';
import type { LedgerEntry, Movement } from '../stack/sandbox-controls';
import { checkRun, ObservedEvent, overDailyLimit, SentCommand } from './checks';

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
    at: Date.parse(at),
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
      '2 × charged for 1 sale/sale-form/rebill command(s)',
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

  it('counts a final saga alerted on the way as settled by evidence, or by a decision (issue #33)', () => {
    const alerted = {
      type: 'outcome-unknown',
      operation: 'sale',
      requestId: saleRequest,
      since: at,
      alert: true,
      concern: 'no-trace',
    };
    expect(run(observed(requested, alerted, approved), ledger(['charged', 2_500]))).toMatchObject({
      paymentsFinal: 1,
      alertedThenSettled: { byEvidence: 1, byDecision: 0 },
    });
    const decided = {
      type: 'settled-by-decision',
      operation: 'sale',
      requestId: saleRequest,
      decision: 'not-done',
    };
    expect(run(observed(requested, alerted, decided), [])).toMatchObject({
      alertedThenSettled: { byEvidence: 0, byDecision: 1 },
    });
    // Never alerted: neither.
    expect(run(observed(requested, approved), ledger(['charged', 2_500]))).toMatchObject({
      alertedThenSettled: { byEvidence: 0, byDecision: 0 },
    });
  });

  describe('sagas left unknown or alerted, against the ledger (issue #38 item 4)', () => {
    const unknown = {
      type: 'outcome-unknown',
      operation: 'sale',
      requestId: saleRequest,
      since: at,
      alert: true,
      concern: 'no-trace',
    };

    it('passes an alerted sale the gateway charged once, or not at all: its outcome is unknown', () => {
      expect(run(observed(requested, unknown), []).openMismatches).toEqual([]);
      expect(run(observed(requested, unknown), ledger(['charged', 2_500])).openMismatches).toEqual(
        [],
      );
    });

    it('reports a ledger movement no event reports and no operation in flight may have made', () => {
      // An alerted sale may have charged, not refunded; nor charged twice on its one request.
      expect(
        run(observed(requested, unknown), ledger(['refunded', 2_500])).openMismatches,
      ).toMatchObject([{ paymentId, detail: expect.stringContaining('refunded 2500') }]);
      expect(
        run(observed(requested, unknown), ledger(['charged', 2_500], ['charged', 2_500]))
          .openMismatches,
      ).toHaveLength(1);
    });

    it('reports an alerted saga that claims money the ledger lacks', () => {
      const capture = randomUUID();
      const events = observed(
        { ...requested, operation: 'preauth' },
        { type: 'authorized', requestId: saleRequest, amount: USD(2_500) },
        {
          type: 'operation-requested',
          operation: 'capture',
          requestId: capture,
          amount: USD(2_500),
          clientOrderId: paymentId,
        },
        {
          type: 'outcome-unknown',
          operation: 'capture',
          requestId: capture,
          since: at,
          alert: true,
          concern: 'no-trace',
        },
      );
      const preauth = { ...sale, type: 'preauth' };
      // The capture in flight may have captured; the authorization reported must be there.
      expect(
        run(events, ledger(['authorized', 2_500], ['captured', 2_500]), [preauth]).openMismatches,
      ).toEqual([]);
      expect(run(events, [], [preauth]).openMismatches).toMatchObject([
        { detail: expect.stringContaining('claim [authorized 2500]') },
      ]);
    });

    it('counts alerted sagas by concern, the deliberate ones aside', () => {
      const result = run(observed(requested, unknown), []);
      expect(result.alertedByConcern).toEqual({ 'no-trace': 1 });
    });
  });

  it('reports a sale published failed while its first send charged (issue #32 item 1)', () => {
    const failed = {
      type: 'failed',
      operation: 'sale',
      requestId: saleRequest,
      reason: 'not-sent',
    };
    expect(run(observed(requested, failed), ledger(['charged', 2_500])).misreported).toMatchObject([
      { paymentId, detail: expect.stringContaining('ledger has [charged 2500]') },
    ]);
  });

  it('holds a capture left requested with no alert as silent (issue #32 items 2 and 8)', () => {
    const capture = randomUUID();
    const events = observed(
      { ...requested, operation: 'preauth' },
      { type: 'authorized', requestId: saleRequest, amount: USD(2_500) },
      {
        type: 'operation-requested',
        operation: 'capture',
        requestId: capture,
        amount: USD(2_500),
        clientOrderId: paymentId,
      },
    );
    expect(
      run(events, ledger(['authorized', 2_500]), [{ ...sale, type: 'preauth' }]).unknown,
    ).toMatchObject([{ paymentId, alerted: false, lastEvent: 'operation-requested' }]);
  });

  it('reports a missing version and one version under two ce_ids, not a redelivery', () => {
    const events = observed(requested, approved);
    expect(run([...events, events[0]], ledger(['charged', 2_500])).versionProblems).toEqual([]);
    expect(run([events[1]], ledger(['charged', 2_500])).versionProblems).toHaveLength(1);
    expect(
      run([...events, { ...events[1], ceId: 'other' }], ledger(['charged', 2_500])).versionProblems,
    ).toHaveLength(1);
  });

  describe('payouts and transfers', () => {
    const payoutId = randomUUID();
    const checkRequest = randomUUID();
    const payRequest = randomUUID();
    const payoutBase = { payoutId, commandId, occurredAt: at };
    const payoutEvents = (...events: Array<Record<string, unknown>>): ObservedEvent[] =>
      events.map((e, i) => ({
        event: { ...payoutBase, version: i + 1, ...e } as PayoutEvent,
        ceId: `payout-ce-${i + 1}`,
      }));
    const payoutLedger = (...moves: Array<[Movement, number]>): LedgerEntry[] =>
      ledger(...moves).map((l) => ({ ...l, clientOrderId: payoutId }));
    const check: SentCommand = {
      commandId,
      paymentId: payoutId,
      type: 'payout-check',
      sentAt: Date.parse(at),
    };
    const approve: SentCommand = { ...check, commandId: randomUUID(), type: 'approve-payout' };
    const checkRequested = {
      type: 'payout-requested',
      operation: 'payout-check',
      requestId: checkRequest,
      amount: USD(5_000),
      clientOrderId: payoutId,
    };
    const registered = {
      type: 'payout-registered',
      requestId: checkRequest,
      amount: USD(5_000),
      recipient: { kind: 'card' },
      approvalDeadline: at,
    };
    const payRequested = { ...checkRequested, operation: 'payout-pay', requestId: payRequest };
    const paidOut = { type: 'paid-out', requestId: payRequest, amount: USD(5_000) };

    it('passes a two-step payout paid out once, and one left to expire with nothing paid', () => {
      const paid = run(
        payoutEvents(
          checkRequested,
          registered,
          { type: 'payout-approved', approvedBy: 'x' },
          payRequested,
          paidOut,
        ),
        payoutLedger(['paid-out', 5_000]),
        [check, approve],
      );
      expect(paid).toMatchObject({
        paymentsFinal: 1,
        unknown: [],
        misreported: [],
        doubleCharges: [],
      });
      const expired = run(
        payoutEvents(checkRequested, registered, { type: 'payout-expired', approvalDeadline: at }),
        [],
        [check],
      );
      expect(expired).toMatchObject({ paymentsFinal: 1, unknown: [], misreported: [] });
    });

    it('reports a payout still awaiting its approval as not final, and a paid-out the ledger lacks', () => {
      const waiting = run(payoutEvents(checkRequested, registered), [], [check]);
      expect(waiting.unknown).toMatchObject([
        { paymentId: payoutId, lastEvent: 'payout-registered', alerted: false },
      ]);
      const one = { ...check, type: 'payout' as const };
      const oneStep = { ...checkRequested, operation: 'payout', requestId: payRequest };
      expect(run(payoutEvents(oneStep, paidOut), [], [one]).misreported).toHaveLength(1);
      const declined = { type: 'payout-declined', operation: 'payout', requestId: payRequest };
      expect(
        run(payoutEvents(oneStep, declined), payoutLedger(['paid-out', 5_000]), [one]).misreported,
      ).toHaveLength(1);
    });

    it('reports a payout paid out twice, and tells an alerted payout from a silent one', () => {
      const one = { ...check, type: 'payout-v4' as const };
      const oneStep = { ...checkRequested, operation: 'payout-v4', requestId: payRequest };
      expect(
        run(
          payoutEvents(oneStep, paidOut),
          payoutLedger(['paid-out', 5_000], ['paid-out', 5_000]),
          [one],
        ).doubleCharges.map((d) => d.detail),
      ).toEqual(['2 × paid-out for 1 payout/payout-v4/approve-payout/payout-form command(s)']);
      const unknown = {
        type: 'payout-outcome-unknown',
        operation: 'payout-v4',
        requestId: payRequest,
        since: at,
        alert: false,
      };
      expect(run(payoutEvents(oneStep, unknown), [], [one]).unknown).toMatchObject([
        { alerted: false },
      ]);
      expect(
        run(
          payoutEvents(oneStep, unknown, { ...unknown, alert: true, concern: 'no-trace' }),
          [],
          [one],
        ).unknown,
      ).toMatchObject([{ alerted: true, concern: 'no-trace' }]);
    });

    it('takes a payout or transfer refused by the daily budget for final, nothing moved', () => {
      const one = { ...check, type: 'payout' as const };
      const oneStep = { ...checkRequested, operation: 'payout', requestId: payRequest };
      const refused = {
        type: 'payout-refused',
        reason: 'DAILY_LIMIT_EXCEEDED',
        message: 'over the limit',
        reservedToday: USD(9_000),
        dailyLimit: USD(10_000),
      };
      expect(run(payoutEvents(oneStep, refused), [], [one])).toMatchObject({
        paymentsFinal: 1,
        unknown: [],
        misreported: [],
      });
      expect(
        run(payoutEvents(oneStep, refused), payoutLedger(['paid-out', 5_000]), [one]).misreported,
      ).toHaveLength(1);
      // Without the refusal the same request is still pending.
      expect(run(payoutEvents(oneStep), [], [one]).unknown).toHaveLength(1);
    });

    it('judges a transfer by its transferred movement', () => {
      const transferId = randomUUID();
      const request = randomUUID();
      const sent: SentCommand = { commandId, paymentId: transferId, type: 'transfer', sentAt: 0 };
      const events: ObservedEvent[] = [
        {
          type: 'transfer-requested',
          operation: 'transfer',
          requestId: request,
          amount: USD(700),
          clientOrderId: transferId,
          merchant: { endpointId: '1113' },
        },
        { type: 'transferred', operation: 'transfer', requestId: request, amount: USD(700) },
      ].map((e, i) => ({
        event: { transferId, commandId, occurredAt: at, version: i + 1, ...e } as TransferEvent,
        ceId: `transfer-ce-${i}`,
      }));
      const moved = ledger(['transferred', 700]).map((l) => ({ ...l, clientOrderId: transferId }));
      expect(run(events, moved, [sent])).toMatchObject({ paymentsFinal: 1, misreported: [] });
      expect(run(events, [], [sent]).misreported).toHaveLength(1);
      expect(run(events, [...moved, { ...moved[0], seq: 9 }], [sent]).doubleCharges).toHaveLength(
        1,
      );
    });
  });

  describe('money out over the daily limit, per endpoint, currency and UTC day as the budget counts', () => {
    /** A one-step payout on `endpointId` requested at `requestedAt` (orchestrator's clock). */
    const payout = (endpointId: string, requestedAt: string, amountMinor: number) => {
      const payoutId = randomUUID();
      const events: ObservedEvent[] = [
        {
          type: 'payout-requested',
          operation: 'payout',
          requestId: randomUUID(),
          amount: USD(amountMinor),
          clientOrderId: payoutId,
          merchant: { endpointId },
        },
        { type: 'paid-out', requestId: randomUUID(), amount: USD(amountMinor) },
      ].map((e, i) => ({
        event: {
          payoutId,
          commandId,
          occurredAt: requestedAt,
          version: i + 1,
          ...e,
        } as PayoutEvent,
        ceId: `${payoutId}-${i}`,
      }));
      return { payoutId, events };
    };
    /** The gateway's movement of a saga at `movedAt` (the sandbox's clock). */
    const moved = (
      sagaId: string,
      movedAt: string,
      movement: Movement,
      amountMinor: number,
    ): LedgerEntry => ({
      ...ledger([movement, amountMinor])[0],
      clientOrderId: sagaId,
      at: Date.parse(movedAt),
    });

    it('gives each endpoint of a login its own budget (summing per login flags a run within every limit)', () => {
      const a = payout('1113', '2026-11-23T10:00:00Z', 6_000);
      const b = payout('1114', '2026-11-23T11:00:00Z', 6_000);
      const entries = [
        moved(a.payoutId, '2026-11-23T10:00:01Z', 'paid-out', 6_000),
        moved(b.payoutId, '2026-11-23T11:00:01Z', 'paid-out', 6_000),
      ];
      const events = [...a.events, ...b.events];
      expect(overDailyLimit(entries, events, 10_000)).toEqual([]);
      expect(overDailyLimit(entries, events, 5_999)).toEqual([
        {
          paymentId: '1113 USD 2026-11-23',
          detail: '6000 out (paid-out + transferred) over the daily limit 5999',
        },
        {
          paymentId: '1114 USD 2026-11-23',
          detail: '6000 out (paid-out + transferred) over the daily limit 5999',
        },
      ]);
    });

    it("counts an amount on the orchestrator's day of its reservation, not the gateway's day of the movement", () => {
      // Reserved on the 23rd (orchestrator), moved by the gateway after midnight of its own clock.
      const a = payout('1113', '2026-11-23T23:59:00Z', 6_000);
      const b = payout('1113', '2026-11-23T10:00:00Z', 6_000);
      const entries = [
        moved(a.payoutId, '2026-11-24T00:00:30Z', 'paid-out', 6_000),
        moved(b.payoutId, '2026-11-23T10:00:01Z', 'paid-out', 6_000),
      ];
      expect(overDailyLimit(entries, [...a.events, ...b.events], 10_000)).toEqual([
        {
          paymentId: '1113 USD 2026-11-23',
          detail: '12000 out (paid-out + transferred) over the daily limit 10000',
        },
      ]);
    });

    it("takes a two-step payout's day from its approval, a transfer's from its request", () => {
      const payoutId = randomUUID();
      const transferId = randomUUID();
      const twoStep: ObservedEvent[] = [
        {
          type: 'payout-requested',
          operation: 'payout-check',
          requestId: randomUUID(),
          amount: USD(7_000),
          clientOrderId: payoutId,
          merchant: { endpointId: '1113' },
          occurredAt: '2026-11-22T23:00:00Z',
        },
        { type: 'payout-approved', approvedBy: 'x', occurredAt: '2026-11-23T01:00:00Z' },
      ].map((e, i) => ({
        event: { payoutId, commandId, version: i + 1, ...e } as PayoutEvent,
        ceId: `${payoutId}-${i}`,
      }));
      const moneyTransfer: ObservedEvent = {
        event: {
          type: 'transfer-requested',
          transferId,
          commandId,
          version: 1,
          occurredAt: '2026-11-23T05:00:00Z',
          operation: 'transfer',
          requestId: randomUUID(),
          amount: USD(4_000),
          clientOrderId: transferId,
          merchant: { endpointId: '1113' },
        },
        ceId: `${transferId}-0`,
      };
      const entries = [
        moved(payoutId, '2026-11-22T23:30:00Z', 'paid-out', 7_000),
        moved(transferId, '2026-11-25T00:00:00Z', 'transferred', 4_000),
        moved(payoutId, '2026-11-23T12:00:00Z', 'charged', 50_000),
      ];
      expect(overDailyLimit(entries, [...twoStep, moneyTransfer], 10_999)).toEqual([
        {
          paymentId: '1113 USD 2026-11-23',
          detail: '11000 out (paid-out + transferred) over the daily limit 10999',
        },
      ]);
      expect(overDailyLimit(entries, [...twoStep, moneyTransfer], 11_000)).toEqual([]);
      expect(overDailyLimit(entries, [...twoStep, moneyTransfer], undefined)).toEqual([]);
      // Another currency is another budget.
      const eur = entries.map((e) => ({ ...e, currency: 'EUR' }));
      expect(
        overDailyLimit([...entries.slice(0, 1), eur[1]], [...twoStep, moneyTransfer], 10_999),
      ).toEqual([]);
    });

    it('keeps a movement of a saga with no events, under its login and the gateway day', () => {
      const entries = [moved(randomUUID(), '2026-11-23T10:00:00Z', 'paid-out', 12_000)];
      expect(overDailyLimit(entries, [], 10_000)).toEqual([
        {
          paymentId: 'login sandbox-merchant (endpoint unknown) USD 2026-11-23',
          detail: '12000 out (paid-out + transferred) over the daily limit 10000',
        },
      ]);
    });
  });
});

describe('checkRun, the payer flows: 3-D Secure, card references and rebills, transfer-by-ref, payout forms', () => {
  const threeDs = { ...requested, merchant: { endpointId: '1111' } };
  const accepted = { type: 'accepted-by-gateway', operation: 'sale', requestId: saleRequest };
  const atAcs = {
    type: 'action-required',
    operation: 'sale',
    requestId: saleRequest,
    action: { kind: 'redirect', url: 'http://127.0.0.1:1/acs/token' },
  };

  it('holds a 3-D Secure sale waiting at the ACS for not final, and judges its end by the ledger', () => {
    expect(run(observed(threeDs, accepted, atAcs), []).unknown).toMatchObject([
      { paymentId, lastEvent: 'action-required', alerted: false },
    ]);
    const passed = observed(threeDs, accepted, atAcs, approved);
    expect(run(passed, ledger(['charged', 2_500]))).toMatchObject({
      paymentsFinal: 1,
      unknown: [],
      misreported: [],
    });
    // Approved after the challenge, nothing charged; or charged another amount.
    expect(run(passed, []).misreported).toHaveLength(1);
    expect(run(passed, ledger(['charged', 2_499])).misreported).toHaveLength(1);
    // Declined (challenge failed, cancelled, or the ACS window over), yet charged.
    const declined = {
      type: 'declined',
      operation: 'sale',
      requestId: saleRequest,
      message: '3-D Secure not completed in time',
    };
    const abandoned = observed(threeDs, accepted, atAcs, declined);
    expect(run(abandoned, [])).toMatchObject({ paymentsFinal: 1, misreported: [] });
    expect(run(abandoned, ledger(['charged', 2_500])).misreported).toHaveLength(1);
  });

  describe('card reference and rebill', () => {
    const refRequest = randomUUID();
    const refCommand: SentCommand = { ...sale, commandId: randomUUID(), type: 'create-card-ref' };
    const refRequested = { type: 'card-ref-requested', requestId: refRequest };
    const created = { type: 'card-ref-created', requestId: refRequest, cardRef: { refId: 'r-1' } };
    const refUnknown = {
      type: 'card-reference-unknown',
      requestId: refRequest,
      operation: 'create-card-ref',
      since: at,
      alert: false,
    };

    it('holds a sale whose card reference is still asked for as not final, alerted once raised', () => {
      const asking = run(observed(requested, approved, refRequested), ledger(['charged', 2_500]), [
        sale,
        refCommand,
      ]);
      expect(asking).toMatchObject({
        paymentsFinal: 0,
        unknown: [{ paymentId, lastEvent: 'card-ref-requested', alerted: false }],
      });
      const raised = run(
        observed(requested, approved, refRequested, refUnknown, { ...refUnknown, alert: true }),
        ledger(['charged', 2_500]),
        [sale, refCommand],
      );
      expect(raised.unknown).toMatchObject([{ paymentId, alerted: true }]);
      const made = run(
        observed(requested, approved, refRequested, refUnknown, created),
        ledger(['charged', 2_500]),
        [sale, refCommand],
      );
      expect(made).toMatchObject({ paymentsFinal: 1, unknown: [], misreported: [] });
      // Making a reference moves no money: a charge beside the sale's is misreported.
      expect(
        run(
          observed(requested, approved, refRequested, created),
          ledger(['charged', 2_500], ['charged', 2_500]),
          [sale, refCommand],
        ).misreported,
      ).toHaveLength(1);
    });

    const rebillId = randomUUID();
    const rebillRequest = randomUUID();
    const rebill: SentCommand = {
      commandId,
      paymentId: rebillId,
      type: 'rebill',
      sentAt: Date.parse(at),
      cardRefId: 'r-1',
    };
    const rebillEvents = (...events: Array<Record<string, unknown>>): ObservedEvent[] =>
      events.map((e, i) => ({
        event: { ...base, paymentId: rebillId, version: i + 1, ...e } as PaymentEvent,
        ceId: `rebill-ce-${i + 1}`,
      }));
    const rebillRequested = {
      type: 'operation-requested',
      operation: 'rebill',
      requestId: rebillRequest,
      amount: USD(1_200),
      clientOrderId: rebillId,
      cardRef: { refId: 'r-1' },
    };
    const rebillApproved = { type: 'approved', requestId: rebillRequest, amount: USD(1_200) };
    const rebillLedger = (...moves: Array<[Movement, number, string?]>) =>
      ledger(...moves).map((l) => ({ ...l, clientOrderId: rebillId }));

    it('judges a rebill saga by its charge: once, the amount asked, on the reference named', () => {
      expect(
        run(rebillEvents(rebillRequested, rebillApproved), rebillLedger(['charged', 1_200]), [
          rebill,
        ]),
      ).toMatchObject({ paymentsFinal: 1, misreported: [], doubleCharges: [] });
      expect(
        run(rebillEvents(rebillRequested, rebillApproved), [], [rebill]).misreported,
      ).toHaveLength(1);
      const declined = { type: 'declined', operation: 'rebill', requestId: rebillRequest };
      expect(
        run(rebillEvents(rebillRequested, declined), rebillLedger(['charged', 1_200]), [rebill])
          .misreported,
      ).toHaveLength(1);
      expect(
        run(
          rebillEvents(rebillRequested, rebillApproved),
          rebillLedger(['charged', 1_200], ['charged', 1_200]),
          [rebill],
        ).doubleCharges.map((d) => d.detail),
      ).toEqual(['2 × charged for 1 sale/sale-form/rebill command(s)']);
    });

    it('reports a rebill whose request charges another card reference than its command named', () => {
      const other = { ...rebillRequested, cardRef: { refId: 'r-2' } };
      expect(
        run(rebillEvents(other, rebillApproved), rebillLedger(['charged', 1_200]), [rebill])
          .misreported,
      ).toMatchObject([{ paymentId: rebillId, detail: expect.stringContaining('r-2') as string }]);
    });
  });

  it('judges a transfer-by-ref by its transferred movement, once', () => {
    const transferId = randomUUID();
    const request = randomUUID();
    const sent: SentCommand = {
      commandId,
      paymentId: transferId,
      type: 'transfer-by-ref',
      sentAt: 0,
    };
    const events: ObservedEvent[] = [
      {
        type: 'transfer-requested',
        operation: 'transfer-by-ref',
        requestId: request,
        amount: USD(900),
        clientOrderId: transferId,
        merchant: { endpointId: '1113' },
      },
      { type: 'transferred', operation: 'transfer-by-ref', requestId: request, amount: USD(900) },
    ].map((e, i) => ({
      event: { transferId, commandId, occurredAt: at, version: i + 1, ...e } as TransferEvent,
      ceId: `transfer-by-ref-ce-${i}`,
    }));
    const moved = ledger(['transferred', 900]).map((l) => ({ ...l, clientOrderId: transferId }));
    expect(run(events, moved, [sent])).toMatchObject({
      paymentsFinal: 1,
      misreported: [],
      doubleCharges: [],
    });
    expect(run(events, [], [sent]).misreported).toHaveLength(1);
    expect(
      run(events, [...moved, { ...moved[0], seq: 9 }], [sent]).doubleCharges.map((d) => d.detail),
    ).toEqual(['2 × transferred for 1 transfer/transfer-by-ref command(s)']);
  });

  it('holds a payout form waiting for the payee as not final, and judges its payout by the ledger', () => {
    const payoutId = randomUUID();
    const request = randomUUID();
    const sent: SentCommand = { commandId, paymentId: payoutId, type: 'payout-form', sentAt: 0 };
    const formEvents = (...events: Array<Record<string, unknown>>): ObservedEvent[] =>
      events.map((e, i) => ({
        event: { payoutId, commandId, occurredAt: at, version: i + 1, ...e } as PayoutEvent,
        ceId: `payout-form-ce-${i + 1}`,
      }));
    const asked = {
      type: 'payout-requested',
      operation: 'payout-form',
      requestId: request,
      amount: USD(3_000),
      clientOrderId: payoutId,
    };
    const atForm = {
      type: 'payout-action-required',
      operation: 'payout-form',
      requestId: request,
      action: { kind: 'redirect', url: 'http://127.0.0.1:1/hpp/token' },
    };
    const paid = {
      type: 'paid-out',
      operation: 'payout-form',
      requestId: request,
      amount: USD(3_000),
    };
    const moved = ledger(['paid-out', 3_000]).map((l) => ({ ...l, clientOrderId: payoutId }));
    expect(run(formEvents(asked, atForm), [], [sent]).unknown).toMatchObject([
      { paymentId: payoutId, lastEvent: 'payout-action-required', alerted: false },
    ]);
    expect(run(formEvents(asked, atForm, paid), moved, [sent])).toMatchObject({
      paymentsFinal: 1,
      misreported: [],
      doubleCharges: [],
    });
    expect(run(formEvents(asked, atForm, paid), [], [sent]).misreported).toHaveLength(1);
    expect(
      run(formEvents(asked, atForm, paid), [...moved, { ...moved[0], seq: 9 }], [sent])
        .doubleCharges,
    ).toHaveLength(1);
  });
});
