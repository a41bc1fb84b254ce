import fc from 'fast-check';
import { GatewayStatus, type PaymentEvent } from '@payments/contracts';
import {
  MERCHANT,
  PAYMENT_ID,
  rebillCommand,
  returnCommand,
  SCHEDULE_ID,
  testUuid,
} from '@payments/contracts/testing';
import * as payments from '../../../test/kits/card-payment.kit';
import * as schedules from '../../../test/kits/recurring-schedule.kit';
import type { RuntimeEffect, SagaInput } from '../../runtime/flow';
import { type RebillCommand, type RecordCycleOutcomeCommand } from '@payments/contracts';
import { cardPaymentFlow } from './card-payment.flow';
import { DEFAULT_POLICY, initialState, type PaymentInput, type PaymentState } from './domain';

/**
 * One report per rebill: whatever the gateway sends after a scheduled rebill —
 * duplicated and reordered callbacks, status replies, late results, poll timers, a return of the
 * approved rebill and its answers — the binding
 * starts `record-cycle-outcome` exactly once if the rebill reaches its outcome, never otherwise,
 * always with the same derived command id and the outcome the payment ended in.
 */
const flow = cardPaymentFlow(DEFAULT_POLICY);

const rebill = rebillCommand({
  commandId: '10000000-0000-4000-8000-00000000aaaa',
  amount: { minor: 990, currency: 'EUR' },
  schedule: { scheduleId: SCHEDULE_ID, cycle: 7, attempt: 2 },
});

/** The runtime's input for a domain input built by the kit. */
function sagaInput(input: PaymentInput): SagaInput {
  switch (input.kind) {
    case 'gateway-result':
      return { kind: 'gateway-result', result: input.result };
    case 'callback':
      return { kind: 'callback', callback: input.callback };
    case 'timer-fired':
      return { kind: 'timer', timer: { kind: input.timer.kind, payload: input.timer } };
    case 'status-check-hint':
      return { kind: 'status-check-hint', hint: input.hint };
    case 'command':
      return {
        kind: 'command',
        command: {
          type: input.command.type,
          commandId: input.command.commandId,
          sagaId: PAYMENT_ID,
          endpointId: MERCHANT.endpointId,
          body: input.command,
        },
      };
  }
}

type Step = (s: PaymentState) => PaymentInput;
const statusArb = fc.constantFrom(...GatewayStatus.options);
const noiseArb: fc.Arbitrary<Step> = fc.oneof(
  statusArb.map((s) => payments.callback(s, { transactionType: 'sale' })),
  statusArb.map((s) => payments.statusReply({ status: s, transactionType: 'sale' })),
  fc.constant(payments.acceptedResult()),
  fc.constant(payments.result({ kind: 'unknown', reason: 'timeout' })),
  fc.constant(payments.result({ kind: 'rejected', code: '2', message: 'refused' })),
  // A return of the approved rebill settles later on its own: no second report.
  fc.constant((): PaymentInput =>
    payments.command(
      returnCommand({ commandId: testUuid(), amount: { minor: 100, currency: 'EUR' } }),
    ),
  ),
  fc.constant((s: PaymentState) =>
    payments.timer({ kind: 'status-poll', requestId: s.inFlight?.requestId ?? 'gone', attempt: 2 }),
  ),
);

const reports = (effects: readonly RuntimeEffect[]) =>
  effects.flatMap((e) =>
    e.type === 'start-saga' && (e.command as { type?: string }).type === 'record-cycle-outcome'
      ? [e.command as { commandId: string; outcome: string; cycle: number; attempt: number }]
      : [],
  );

describe('a scheduled rebill reports its cycle outcome once', () => {
  it('exactly one record-cycle-outcome once the rebill has its outcome, none before; same id, its outcome', () => {
    fc.assert(
      fc.property(fc.array(noiseArb, { minLength: 1, maxLength: 12 }), (steps) => {
        const ctx = payments.testContext();
        const first = flow.decide(
          {
            kind: 'command',
            command: {
              type: 'rebill',
              commandId: rebill.commandId,
              sagaId: PAYMENT_ID,
              endpointId: MERCHANT.endpointId,
              body: rebill,
            },
          },
          initialState,
          ctx,
        );
        let state = first.events.reduce((s, e) => flow.evolve(s, e), initialState as PaymentState);
        const seen = [...reports(first.effects)];
        let outcome: string | undefined;
        steps.forEach((step, i) => {
          const decision = flow.decide(
            sagaInput(step(state)),
            state,
            payments.testContext(payments.at(i * 1000)),
          );
          seen.push(...reports(decision.effects));
          state = decision.events.reduce((s, e: PaymentEvent) => flow.evolve(s, e), state);
          if (outcome === undefined && ['approved', 'declined', 'failed'].includes(state.status))
            outcome = state.status;
        });
        expect(seen).toHaveLength(outcome === undefined ? 0 : 1);
        if (outcome !== undefined) expect(seen[0]).toMatchObject({ outcome, cycle: 7, attempt: 2 });
      }),
      { numRuns: 300 },
    );
  });
});

describe('a scheduled rebill refused at the command stage', () => {
  const T0 = schedules.T0;
  /** The schedule's first cycle started: its rebill command is the start-saga effect. */
  const charging = () => schedules.givenInputs([schedules.create(), T0], [schedules.timer(0), T0]);
  const routed = (body: RebillCommand) => ({
    kind: 'command' as const,
    command: {
      type: body.type,
      commandId: body.commandId,
      sagaId: body.paymentId,
      endpointId: body.merchant.endpointId,
      body,
    },
  });
  /** The limits were lowered after the schedule was created: its rebill is now over them. */
  const lowered = cardPaymentFlow({ ...DEFAULT_POLICY, limits: { default: { maxMinor: 500 } } });

  it('still reports its cycle as failed with the refusal code, so the schedule leaves its charge and can be paused', () => {
    const started = schedules.givenInputs([schedules.create(), T0]).when(schedules.timer(0), T0);
    const [start] = started.decision.effects;
    if (start?.type !== 'start-rebill') throw new Error('no rebill started');
    const refused = lowered.decide(routed(start.command), initialState, payments.testContext(T0));
    expect(refused).toMatchObject({
      outcome: 'rejected',
      rejection: { code: 'AMOUNT_ABOVE_MAXIMUM' },
    });
    if (refused.outcome !== 'rejected') return;
    const effects =
      lowered.refusalEffects?.(routed(start.command).command, refused.rejection, T0) ?? [];
    const [report] = reports(effects);
    expect(report).toMatchObject({
      type: 'record-cycle-outcome',
      outcome: 'failed',
      code: 'AMOUNT_ABOVE_MAXIMUM',
      paymentId: start.command.paymentId,
      cycle: 0,
      attempt: 1,
    });
    // The schedule takes it as the cycle's failure: past due with a retry, and pause is taken.
    charging()
      .and(() => schedules.command(report as RecordCycleOutcomeCommand), T0)
      .when(schedules.pause(), T0)
      .then([{ type: 'schedule-paused' }]);
    charging()
      .when(() => schedules.command(report as RecordCycleOutcomeCommand), T0)
      .then([
        { type: 'cycle-charge-declined', outcome: 'failed', code: 'AMOUNT_ABOVE_MAXIMUM' },
        { type: 'schedule-past-due' },
      ]);
  });

  it('a rebill without a schedule, or refused because its payment exists, reports nothing', () => {
    const alone = routed(rebillCommand({ amount: { minor: 990, currency: 'EUR' } }));
    expect(
      lowered.refusalEffects?.(alone.command, { code: 'AMOUNT_ABOVE_MAXIMUM', message: '' }, T0),
    ).toEqual([]);
    expect(
      flow.refusalEffects?.(
        routed(rebill).command,
        { code: 'PAYMENT_ALREADY_EXISTS', message: '' },
        T0,
      ),
    ).toEqual([]);
  });
});
