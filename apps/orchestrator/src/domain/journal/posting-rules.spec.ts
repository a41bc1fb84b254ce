import fc from 'fast-check';
import type { PaymentEvent, SettleByDecisionCommand } from '@payments/contracts';
import * as commands from '@payments/contracts/testing';
import * as payments from '../../../test/kits/card-payment.kit';
import * as payouts from '../../../test/kits/payout.kit';
import type { PayoutInput, PayoutState } from '../../flows/payout/domain/model';
import type { PaymentState } from '../../flows/card-payment/domain/state';
import type { PaymentInput } from '../../flows/card-payment/domain/inputs';
import { FLOW_MODULES } from '../../flows/registered-flows';
import {
  entryTotals,
  foldJournal,
  type JournalEntry,
  type JournalEvent,
  merchantAccount,
  POSTING_RULES,
  postAll,
} from './index';

const ENDPOINT = commands.saleCommand().merchant.endpointId;
const acct = (kind: Parameters<typeof merchantAccount>[1]) => merchantAccount(ENDPOINT, kind);

/** Balance of each account over entries (debit positive). */
function balances(entries: readonly JournalEntry[]): Record<string, bigint> {
  const out: Record<string, bigint> = {};
  for (const e of entries)
    for (const l of e.lines)
      out[`${l.account} ${l.currency}`] = (out[`${l.account} ${l.currency}`] ?? 0n) + l.amount;
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== 0n));
}

const entriesOf = (s: payments.Scenario) => postAll(s.events).entries;

describe('journal posting rules', () => {
  it('every money event of every flow module has a posting rule', () => {
    for (const module of FLOW_MODULES)
      for (const type of module.moneyEvents)
        expect([module.name, type, type in POSTING_RULES]).toEqual([module.name, type, true]);
  });

  describe.each(['', 'payout-', 'transfer-'])(
    "a person's decision (%ssettled-by-decision)",
    (prefix) => {
      const at = '2026-11-29T10:00:00.000Z';
      const base = { occurredAt: at, requestId: 'r-1', merchant: { endpointId: ENDPOINT } };
      const held = { minor: 4_000, currency: 'EUR' };
      const decided = (decision: Partial<JournalEvent>) =>
        postAll([
          {
            ...base,
            type: `${prefix === '' ? 'operation-' : prefix}requested`,
            version: 1,
            operation: 'op',
            amount: held,
          },
          { ...base, type: `${prefix}outcome-unknown`, version: 2 },
          { ...base, type: `${prefix}settled-by-decision`, version: 3, ...decision },
        ]).entries;

      it('done at the amount held: it all moves to settled-by-decision, never to an account the gateway answers for', () => {
        const entries = decided({ decision: 'done', amount: held });
        expect(balances(entries)).toEqual({
          [`${acct('settled-by-decision')} EUR`]: 4_000n,
          'world EUR': -4_000n,
        });
      });

      it('done at X below the amount held: X to settled-by-decision, the rest of the hold back to the world', () => {
        const entries = decided({ decision: 'done', amount: { minor: 2_500, currency: 'EUR' } });
        expect(entries[entries.length - 1]?.lines).toEqual([
          { account: acct('settled-by-decision'), currency: 'EUR', amount: 2_500n },
          { account: acct('in-flight-unknown'), currency: 'EUR', amount: -2_500n },
          { account: 'world', currency: 'EUR', amount: 1_500n },
          { account: acct('in-flight-unknown'), currency: 'EUR', amount: -1_500n },
        ]);
        expect(balances(entries)).toEqual({
          [`${acct('settled-by-decision')} EUR`]: 2_500n,
          'world EUR': -2_500n,
        });
      });

      it('done at X above the amount held: the hold and the rest from the world to settled-by-decision', () => {
        const entries = decided({ decision: 'done', amount: { minor: 5_000, currency: 'EUR' } });
        expect(balances(entries)).toEqual({
          [`${acct('settled-by-decision')} EUR`]: 5_000n,
          'world EUR': -5_000n,
        });
      });

      it('done in another currency than held: the hold back to the world, X from it', () => {
        const entries = decided({ decision: 'done', amount: { minor: 3_000, currency: 'USD' } });
        expect(balances(entries)).toEqual({
          [`${acct('settled-by-decision')} USD`]: 3_000n,
          'world USD': -3_000n,
        });
      });

      it('not done: nothing moved, the amount held goes back to the world', () => {
        expect(balances(decided({ decision: 'not-done' }))).toEqual({});
      });
    },
  );

  it('a sale: captured-receivable carries the amount, the world the other side', () => {
    expect(balances(entriesOf(payments.approvedSale()))).toEqual({
      [`${acct('captured-receivable')} EUR`]: 10_000n,
      'world EUR': -10_000n,
    });
  });

  it('a preauth, a partial capture and two partial returns', () => {
    let s = payments.authorized();
    s = payments.approvedFollowUp(s, commands.captureCommand({ amount: payments.eur(6_000) }));
    s = payments.approvedFollowUp(s, commands.returnCommand({ amount: payments.eur(1_000) }));
    s = payments.approvedFollowUp(s, commands.returnCommand({ amount: payments.eur(2_000) }));
    const entries = entriesOf(s);
    expect(entries.map((e) => e.eventType)).toEqual([
      'authorized',
      'captured',
      'returned',
      'returned',
    ]);
    expect(balances(entries)).toEqual({
      [`${acct('captured-receivable')} EUR`]: 6_000n,
      [`${acct('refunds-payable')} EUR`]: 3_000n,
      'world EUR': -9_000n,
    });
  });

  it('an unknown outcome holds the requested amount in flight until the answer', () => {
    const unknown = payments.givenInputs(
      payments.command(commands.saleCommand()),
      payments.result({ kind: 'unknown', reason: 'timeout' }),
    );
    expect(balances(entriesOf(unknown))).toEqual({
      [`${acct('in-flight-unknown')} EUR`]: 10_000n,
      'world EUR': -10_000n,
    });
    const answered = unknown.and(payments.answer('approved'));
    expect(balances(entriesOf(answered))).toEqual({
      [`${acct('captured-receivable')} EUR`]: 10_000n,
      'world EUR': -10_000n,
    });
    const declined = unknown.and(payments.answer('declined'));
    expect(balances(entriesOf(declined))).toEqual({});
  });
});

type Step = (s: PaymentState) => PaymentInput;
const amountArb = fc.integer({ min: 1, max: 12_000 });
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.constant(payments.acceptedResult()),
  fc
    .constantFrom('approved', 'declined', 'error', 'processing')
    .map((st) => payments.answer(st as 'approved')),
  fc.constant(payments.result({ kind: 'unknown', reason: 'timeout' })),
  fc.constant(payments.result({ kind: 'rejected', code: 'x', message: 'no' } as never)),
  amountArb.map(
    (m) => () => payments.command(commands.captureCommand({ amount: payments.eur(m) })),
  ),
  fc.constant(() => payments.command(commands.captureCommand())),
  amountArb.map((m) => () => payments.command(commands.returnCommand({ amount: payments.eur(m) }))),
  fc.constant(() => payments.command(commands.voidCommand())),
  fc.option(amountArb, { nil: undefined }).map(
    (x): Step =>
      (state) =>
        decidedBy(state, x),
  ),
);

/**
 * The case service's settle-by-decision about the request in flight: done at `x` (any amount:
 * below, at or above the one held), or not done (undefined). Refused by the decider unless the
 * outcome is unknown (then only a command-rejected event).
 */
function decidedBy(state: PaymentState, x: number | undefined): PaymentInput {
  if (state.status === 'initial') throw new Error('no payment');
  const command: SettleByDecisionCommand = {
    type: 'settle-by-decision',
    commandId: '20000000-0000-4000-8000-0000000000d1',
    paymentId: state.paymentId,
    merchant: state.merchant,
    occurredAt: payments.T0,
    requestId: state.inFlight?.requestId ?? '00000000-0000-4000-8000-000000000000',
    caseId: '20000000-0000-4000-8000-00000000ca5e',
    decidedBy: 'alice',
    approvedBy: 'bob',
    reason: 'the gateway shows no trace; the bank says',
    ...(x === undefined
      ? { decision: 'not-done' as const }
      : { decision: 'done' as const, amount: payments.eur(x) }),
  };
  return { kind: 'command', command };
}

describe('journal properties (card payments)', () => {
  it('every entry balances per currency, holds never go negative, and replaying the history rebuilds the same lines', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(stepArb, { minLength: 1, maxLength: 20 }),
        (preauth, steps) => {
          let s = payments.givenInputs(
            payments.command(preauth ? commands.preauthCommand() : commands.saleCommand()),
          );
          const incremental: JournalEntry[] = [...entriesOf(s)];
          for (const [i, step] of steps.entries()) {
            const before = s.events as PaymentEvent[];
            s = s.and(step, payments.at((i + 1) * 1000));
            const fresh = (s.events as PaymentEvent[]).slice(before.length);
            const { entries, fold } = postAll(fresh, foldJournal(before));
            incremental.push(...entries);
            for (const held of Object.values(fold.authorized)) expect(held >= 0n).toBe(true);
          }
          for (const entry of incremental)
            for (const total of entryTotals(entry).values()) expect(total).toBe(0n);
          expect(entriesOf(s)).toEqual(incremental);
          for (const [account, balance] of Object.entries(balances(incremental)))
            if (!account.startsWith('world'))
              expect([account, balance >= 0n]).toEqual([account, true]);
        },
      ),
      { numRuns: 300 },
    );
  });
});

type PayoutStep = (s: PayoutState, id: string) => PayoutInput;
const payoutStepArb: fc.Arbitrary<PayoutStep> = fc.oneof(
  fc.constant<PayoutStep>((_s, id) => payouts.command(payouts.approve(id))),
  fc.constant<PayoutStep>((_s, id) => payouts.command(payouts.reject(id))),
  fc
    .constantFrom('approved', 'declined', 'error', 'processing', 'unknown')
    .map(
      (status) => (s: PayoutState) => payouts.statusReply(s, { status: status }, ['payout-pay']),
    ),
  fc
    .constantFrom('accepted', 'unknown', 'not-sent')
    .map(
      (kind) => (s: PayoutState) =>
        payouts.sendResult(s, kind === 'accepted' ? { kind: 'accepted' } : { kind, reason: 'x' }),
    ),
);

describe('journal properties (payouts)', () => {
  it('every entry balances, replay rebuilds the same lines, and a paid-out payout leaves payouts-sent at its amount', () => {
    fc.assert(
      fc.property(fc.array(payoutStepArb, { minLength: 1, maxLength: 15 }), (steps) => {
        const { world, id } = payouts.registeredPayout();
        const incremental: JournalEntry[] = [...postAll(world.events(id)).entries];
        steps.forEach((step, i) => {
          const before = world.events(id);
          world.apply(id, (s) => step(s, id), payouts.at((i + 1) * 1000));
          const fresh = world.events(id).slice(before.length);
          incremental.push(...postAll(fresh, foldJournal(before)).entries);
        });
        for (const entry of incremental)
          for (const total of entryTotals(entry).values()) expect(total).toBe(0n);
        const all = world.events(id);
        expect(postAll(all).entries).toEqual(incremental);
        const paid = all.filter((e) => e.type === 'paid-out');
        const sent =
          balances(incremental)[`${merchantAccount(payouts.ENDPOINT, 'payouts-sent')} EUR`];
        expect(sent ?? 0n).toBe(
          paid.reduce((n, e) => n + BigInt(e.type === 'paid-out' ? e.amount.minor : 0), 0n),
        );
      }),
      { numRuns: 200 },
    );
  });
});
