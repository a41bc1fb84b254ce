import fc from 'fast-check';
import { GatewayStatus, isFinalGatewayStatus, type PaymentEvent } from '@payments/contracts';
import * as commands from '@payments/contracts/testing';
import type { PaymentInput } from './inputs';
import { FINAL_STATUSES, type PaymentState } from './state';
import * as payments from '../../../../test/kits/card-payment.kit';
import { SERIAL_QUERY_ATTEMPTS } from '../../../domain/gateway-operation/operation-serial';
import { gatewayResultInput } from '../gateway-vocabulary';
import type { Effect } from './effects';
import { FlowHistory } from '../../../../test/kits/flow.kit';

type Step = (s: PaymentState) => PaymentInput;

const statusArb = fc.constantFrom(...GatewayStatus.options);
const FINAL_OUTCOME_TYPES = new Set<PaymentEvent['type']>(['approved', 'declined', 'failed']);

/** The sale's request: in flight, or settled with its serial still asked for. */
const saleId = (s: PaymentState): string =>
  s.status === 'initial' ? 'gone' : (s.serialPending?.requestId ?? s.inFlight?.requestId ?? 'gone');

/** A send result of the sale's own request (late when a callback settled it). */
function saleResult(s: PaymentState, result: Parameters<typeof payments.result>[0]): PaymentInput {
  return gatewayResultInput({
    requestId: saleId(s),
    paymentId: s.status === 'initial' ? '' : s.paymentId,
    operation: 'sale',
    attempt: 1,
    result,
    completedAt: payments.T0,
  });
}

/** A status reply about the sale's request, by order: naming `serial` (or none), or refused. */
const serialReply =
  (serial: string | undefined, refused = false, transactionType = 'sale'): Step =>
  (s) =>
    gatewayResultInput({
      requestId: '10000000-0000-4000-8000-00000000beef',
      paymentId: s.status === 'initial' ? '' : s.paymentId,
      operation: 'status',
      subjectRequestId: saleId(s),
      attempt: 1,
      result: refused
        ? { kind: 'rejected', code: '403', message: 'refused' }
        : {
            kind: 'accepted',
            report: {
              status: 'approved',
              gatewayOrderId: 'gw-777',
              transactionType,
              amount: { minor: 10_000, currency: 'EUR' },
              ...(serial === undefined ? {} : { requestSerial: serial }),
            },
          },
      completedAt: payments.T0,
    });

const serialTimer =
  (attempt: number): Step =>
  (s) =>
    payments.timer({ kind: 'serial-query', requestId: saleId(s), attempt });

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
  // Issue #35: the sale's own send result after its callback, and the answers about its serial.
  fc.constant({
    label: 'late accepted naming the serial',
    step: (s: PaymentState) => saleResult(s, { kind: 'accepted', serialNumber: 'sn-sale' }),
    final: false,
  }),
  // About the sale in flight it is an ordinary status reply, which settles it.
  fc.constant({ label: 'serial reply', step: serialReply('sn-sale'), final: true }),
  fc.integer({ min: 1, max: SERIAL_QUERY_ATTEMPTS + 1 }).map((attempt) => ({
    label: `serial query ${attempt}`,
    step: serialTimer(attempt),
    final: false,
  })),
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
  it('a sale settled by its callback: its serial recorded at most once, a follow-up published exactly once and only once the question closed', () => {
    const stepArb: fc.Arbitrary<Step> = fc.oneof(
      { weight: 3, arbitrary: fc.constant(() => payments.command(commands.returnCommand())) },
      { weight: 1, arbitrary: fc.constant(() => payments.command(commands.voidCommand())) },
      {
        weight: 3,
        arbitrary: fc
          .tuple(
            fc.option(fc.constantFrom('sn-sale', 'sn-other'), { nil: undefined }),
            fc.boolean(),
            fc.constantFrom('sale', 'reversal', 'void'),
          )
          .map(([serial, refused, type]) => serialReply(serial, refused, type)),
      },
      {
        weight: 2,
        arbitrary: fc
          .integer({ min: 1, max: SERIAL_QUERY_ATTEMPTS + 1 })
          .map((attempt) => serialTimer(attempt)),
      },
      {
        weight: 1,
        arbitrary: fc.constantFrom<Step>(
          (s) => saleResult(s, { kind: 'accepted', serialNumber: 'sn-sale' }),
          (s) => saleResult(s, { kind: 'unknown', reason: 'timeout' }),
        ),
      },
      { weight: 1, arbitrary: fc.constant(payments.callback('approved')) },
    );
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.array(stepArb, { minLength: 1, maxLength: 25 }),
        (lost, steps) => {
          const start = payments.givenInputs(
            payments.command(commands.saleCommand()),
            ...(lost ? [payments.result({ kind: 'unknown', reason: 'timeout' })] : []),
            payments.callback('approved'),
          );
          const published = new Map<string, number>();
          let s = start;
          steps.forEach((step, i) => {
            const before = s.state;
            const input = step(before);
            const outcome = s.when(input, payments.at(i * 1000));
            const after = outcome.after;
            const marked = after.status !== 'initial' && after.serialPending !== undefined;
            for (const effect of outcome.decision.effects as Effect[]) {
              const id =
                effect.type === 'publish-held-request'
                  ? effect.requestId
                  : effect.type === 'send-gateway-request' &&
                      effect.request.operation !== 'status' &&
                      effect.held !== true
                    ? effect.request.requestId
                    : undefined;
              if (id === undefined) continue;
              // Never sent while the sale's serial is still asked for (a reply would describe it).
              expect(marked).toBe(false);
              published.set(id, (published.get(id) ?? 0) + 1);
            }
            // The decision checked is the one appended (the same ids: no second decision).
            s = new FlowHistory(s.flow, [...s.events, ...outcome.decision.events], s.ids, s.policy);
          });
          const events = s.events;
          // One outcome, one money event: nothing learnt about the serial ever settles or charges.
          expect(events.filter((e) => e.type === 'approved')).toHaveLength(1);
          const approvedAt = events.findIndex((e) => e.type === 'approved');
          const first = events[0];
          const sale = first?.type === 'operation-requested' ? first.requestId : undefined;
          const afterwards = events
            .slice(approvedAt + 1)
            .filter((e) => e.type === 'accepted-by-gateway' && e.requestId === sale);
          expect(afterwards.length).toBeLessThanOrEqual(1);
          for (const count of published.values()) expect(count).toBe(1);
          // A follow-up still in flight once the question closed went out; one still held did not.
          const end = s.state;
          const op = end.inFlight;
          if (op !== undefined)
            expect(published.get(op.requestId) ?? 0).toBe(end.serialPending === undefined ? 1 : 0);
          expect(events.map((e) => e.version)).toEqual(events.map((_, i) => i + 1));
        },
      ),
      { numRuns: 300 },
    );
  });
});
