import fc from 'fast-check';
import { GatewayStatus, isFinalGatewayStatus, type PaymentEvent } from '@payments/contracts';
import * as commands from '@payments/contracts/testing';
import type { PaymentInput } from './inputs';
import { FINAL_STATUSES, type PaymentState } from './state';
import * as payments from '../../../../test/kits/card-payment.kit';

type Step = (s: PaymentState) => PaymentInput;

const statusArb = fc.constantFrom(...GatewayStatus.options);
const FINAL_OUTCOME_TYPES = new Set<PaymentEvent['type']>(['approved', 'declined', 'failed']);

/** Anything that can arrive after a sale was sent: callbacks, status replies, late/duplicate results, timers. */
const saleNoiseArb: fc.Arbitrary<{ label: string; step: Step; final: boolean }> = fc.oneof(
  statusArb.map((s) => ({
    label: `callback ${s}`,
    step: payments.callback(s),
    final: isFinalGatewayStatus(s),
  })),
  statusArb.map((s) => ({
    label: `status ${s}`,
    step: payments.statusReply({ status: s }),
    final: isFinalGatewayStatus(s),
  })),
  fc.constant({ label: 'late accepted', step: payments.acceptedResult(), final: false }),
  fc.constant({
    label: 'late unknown',
    step: payments.result({ kind: 'unknown', reason: 'timeout' }),
    final: false,
  }),
  fc.constant({
    label: 'poll',
    step: (s: PaymentState) =>
      payments.timer({
        kind: 'status-poll',
        requestId: s.inFlight?.requestId ?? 'gone',
        attempt: 2,
      }),
    final: false,
  }),
);

function run(
  start: payments.Scenario,
  steps: Step[],
  check: (before: PaymentState, after: PaymentState, events: PaymentEvent[]) => void,
): payments.Scenario {
  let s = start;
  steps.forEach((step, i) => {
    const before = s.state;
    const next = s.and(step, payments.at(i * 1000));
    const events = next.events.slice(s.events.length);
    check(before, next.state, events);
    s = next;
  });
  return s;
}

describe('properties', () => {
  it('duplicated and reordered callbacks after a sale fold into exactly one final outcome; final never moves', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(saleNoiseArb, { minLength: 1, maxLength: 25 }),
        (accepted, noise) => {
          const start = accepted
            ? payments.givenInputs(
                payments.command(commands.saleCommand()),
                payments.acceptedResult(),
              )
            : payments.givenInputs(payments.command(commands.saleCommand()));
          const end = run(
            start,
            noise.map((n) => n.step),
            (before, after) => {
              if (FINAL_STATUSES.includes(before.status)) expect(after.status).toBe(before.status);
            },
          );
          const finals = end.events.filter((e) => FINAL_OUTCOME_TYPES.has(e.type));
          expect(finals.length).toBe(noise.some((n) => n.final) ? 1 : 0);
          expect(end.events.map((e) => e.version)).toEqual(end.events.map((_, i) => i + 1));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('captured never exceeds authorized; returned never exceeds captured (or is exactly the released hold)', () => {
    const eur = (minor: number) => ({ minor, currency: 'EUR' });
    // Bias towards the boundaries of a 100.00 authorization, where off-by-one rules would break.
    const amountArb = fc.option(
      fc.oneof(
        fc.constantFrom(
          0,
          1,
          2_500,
          4_000,
          5_000,
          6_000,
          6_001,
          7_500,
          9_999,
          10_000,
          10_001,
          10_400,
        ),
        fc.integer({ min: 0, max: 15_000 }),
      ),
      { nil: undefined },
    );
    const stepArb: fc.Arbitrary<Step> = fc.oneof(
      {
        weight: 3,
        arbitrary: amountArb.map(
          (a) => () =>
            payments.command(commands.captureCommand(a === undefined ? {} : { amount: eur(a) })),
        ),
      },
      {
        weight: 3,
        arbitrary: amountArb.map(
          (a) => () =>
            payments.command(commands.returnCommand(a === undefined ? {} : { amount: eur(a) })),
        ),
      },
      {
        weight: 1,
        arbitrary: amountArb.map(
          (a) => () =>
            payments.command(commands.voidCommand(a === undefined ? {} : { amount: eur(a) })),
        ),
      },
      // Approvals are what move money; make them common so the limits are actually reached.
      { weight: 5, arbitrary: fc.constant(payments.callback('approved')) },
      { weight: 2, arbitrary: statusArb.map((s) => payments.callback(s)) },
      {
        weight: 1,
        arbitrary: fc.constant(payments.result({ kind: 'unknown', reason: 'timeout' })),
      },
      { weight: 1, arbitrary: fc.constant(payments.acceptedResult()) },
    );
    fc.assert(
      fc.property(fc.array(stepArb, { minLength: 4, maxLength: 30 }), (steps) => {
        const start = payments.givenInputs(
          payments.command(commands.preauthCommand()),
          payments.acceptedResult(),
          payments.callback('approved'),
        );
        const end = run(start, steps, (_before, after) => {
          expect(after.captured).toBeLessThanOrEqual(after.authorized);
          if (after.holdReleased) {
            expect(after.captured).toBe(0);
            expect(after.returned).toBe(after.authorized);
          } else {
            expect(after.returned).toBeLessThanOrEqual(after.captured);
          }
        });
        const sum = (type: 'captured' | 'returned') =>
          end.events.reduce(
            (acc, e) =>
              e.type === type && !(e.type === 'returned' && e.holdReleased)
                ? acc + e.amount.minor
                : acc,
            0,
          );
        expect(sum('captured')).toBe(end.state.captured);
        if (!end.state.holdReleased) expect(sum('returned')).toBe(end.state.returned);
      }),
      { numRuns: 300 },
    );
  });
});
