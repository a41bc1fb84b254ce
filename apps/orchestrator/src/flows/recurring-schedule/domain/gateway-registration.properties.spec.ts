import fc from 'fast-check';
import * as schedules from '../../../../test/kits/recurring-schedule.kit';
import { decideSchedule, type ScheduleInput } from './decide';
import { chargeSubjectId } from './gateway-charged';
import { fold } from './evolve';
import { initialScheduleState, type ScheduleState } from './state';

/**
 * Property: a schedule registered with the gateway is never rebilled by us, and each gateway
 * order gives at most one charge event, whatever arrives in whatever order (redelivered callbacks,
 * stray charge timers, status answers, commands).
 */
type Step =
  | { kind: 'callback'; n: number; order: number }
  | { kind: 'answer'; order: number; status: 'approved' | 'declined' | 'processing' }
  | { kind: 'charge-timer'; cycle: number }
  | { kind: 'status-timer'; poll: number; order: number }
  | { kind: 'operation-timer'; alert: boolean; order: number }
  | { kind: 'command'; which: number }
  | { kind: 'registration'; outcome: 'accepted' | 'unknown' | 'rejected' };

const step: fc.Arbitrary<Step> = fc.oneof(
  schedules.stepOf('callback', {
    n: fc.integer({ min: 1, max: 4 }),
    order: fc.integer({ min: 1, max: 4 }),
  }),
  schedules.stepOf('answer', {
    order: fc.integer({ min: 1, max: 4 }),
    status: fc.constantFrom('approved' as const, 'declined' as const, 'processing' as const),
  }),
  schedules.stepOf('charge-timer', { cycle: fc.integer({ min: 0, max: 3 }) }),
  schedules.stepOf('status-timer', {
    poll: fc.integer({ min: 1, max: 4 }),
    order: fc.integer({ min: 1, max: 4 }),
  }),
  schedules.stepOf('operation-timer', {
    alert: fc.boolean(),
    order: fc.integer({ min: 1, max: 4 }),
  }),
  schedules.stepOf('command', { which: fc.integer({ min: 0, max: 3 }) }),
  schedules.stepOf('registration', {
    outcome: fc.constantFrom('accepted' as const, 'unknown' as const, 'rejected' as const),
  }),
);

function input(s: Step, state: ScheduleState): ScheduleInput | undefined {
  const orderId = (order: number) => `10000${order}`;
  switch (s.kind) {
    case 'callback':
      return schedules.chargeCallback(s.n, orderId(s.order));
    case 'answer': {
      if (state.status !== 'registering' && state.status !== 'registered') return undefined;
      const charge = state.charges.find((c) => c.gatewayOrderId === orderId(s.order));
      if (charge === undefined) return undefined;
      return {
        kind: 'gateway-result',
        result: {
          requestId: '00000000-0000-4000-8000-00000000000' + String(s.order),
          paymentId: state.terms.scheduleId,
          operation: 'status',
          subjectRequestId: chargeSubjectIdOf(state, charge.gatewayOrderId),
          attempt: 1,
          result: {
            kind: 'accepted',
            report: {
              status: s.status,
              gatewayOrderId: charge.gatewayOrderId,
              amount: { minor: 999, currency: 'EUR' },
              transactionType: 'sale',
            },
          },
          completedAt: schedules.T0,
        },
      };
    }
    case 'charge-timer':
      return schedules.timer(s.cycle);
    case 'status-timer':
      return schedules.statusTimer(s.poll, orderId(s.order));
    case 'operation-timer':
      return schedules.chargeTimer(orderId(s.order), s.alert ? 'unknown-alert' : 'status-poll');
    case 'command':
      return [
        schedules.pause(),
        schedules.resume(),
        schedules.update({ minor: 1, currency: 'EUR' }),
        schedules.cancel(),
      ][s.which];
    case 'registration':
      if (state.status !== 'registering') return undefined;
      return schedules.registrationReply(
        s.outcome === 'accepted'
          ? { kind: 'accepted', recurringPaymentId: '77' }
          : s.outcome === 'unknown'
            ? { kind: 'unknown', reason: 'timeout' }
            : { kind: 'rejected', code: '1', message: 'no' },
      )(state);
  }
}

const chargeSubjectIdOf = (state: ScheduleState, orderId: string) =>
  state.status === 'initial' ? '' : chargeSubjectId(state.terms.scheduleId, orderId);

describe('property: a schedule registered with the gateway', () => {
  it('never starts a rebill or arms a charge timer, and records each gateway order at most once', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), (steps) => {
        let scenario = schedules
          .history([], schedules.GATEWAY_POLICY)
          .and(schedules.create(), schedules.T0);
        for (const s of steps) {
          const state = fold(initialScheduleState, scenario.events);
          const next = input(s, state);
          if (next === undefined) continue;
          const decision = decideSchedule(next, state, {
            now: schedules.T0,
            policy: schedules.GATEWAY_POLICY,
          });
          for (const effect of decision.effects) {
            expect(['start-rebill', 'set-charge-timer']).not.toContain(effect.type);
          }
          scenario = schedules.history(
            [...scenario.events, ...decision.events],
            schedules.GATEWAY_POLICY,
          );
        }
        const money = scenario.events.filter(
          (e) => e.type === 'gateway-cycle-charged' || e.type === 'gateway-cycle-declined',
        );
        const orders = money.map((e) => ('gatewayOrderId' in e ? e.gatewayOrderId : ''));
        expect(new Set(orders).size).toBe(orders.length);
        // Every money event follows the report of its order.
        for (const e of money) {
          const reported = scenario.events.findIndex(
            (r) =>
              r.type === 'gateway-charge-reported' &&
              'gatewayOrderId' in e &&
              r.gatewayOrderId === e.gatewayOrderId,
          );
          expect(reported).toBeGreaterThanOrEqual(0);
          expect(reported).toBeLessThan(scenario.events.indexOf(e));
        }
        expect(scenario.events.some((e) => e.type.startsWith('cycle-'))).toBe(false);
      }),
      { numRuns: 300 },
    );
  });
});
