import { type RejectionArgs, rejectionFields } from '../../domain/rejection';
import { OPERATION_TIMER_KINDS } from '../../domain/gateway-operation/gateway-operation';
import { SERIAL_QUERY_TIMER } from '../../domain/gateway-operation/operation-serial';
import {
  CARD_PAYMENT_FAMILY,
  type CardReferenceCommand,
  commandTypesOf,
  type PaymentCommand,
  type PaymentEvent,
  type PaymentOperation,
} from '@payments/contracts';
import { type Decider, type Flow, foldEvents } from '../../runtime/flow';
import { gatewayFlow, runtimeEffectOf } from '../../runtime/flow-binding';
import {
  cardRefResendWanted,
  decide,
  type Effect,
  evolve,
  initialState,
  isSettled,
  type PaymentInput,
  type PaymentPolicy,
  type PaymentState,
  resendStillWanted,
  type Timer,
} from './domain';
import { cycleOutcomeEffects, refusedRebillEffects, scheduleStartEffects } from './cycle-outcome';
import { CARD_PAYMENT_OPERATIONS } from './gateway-vocabulary';

export const CARD_PAYMENT_FLOW = 'card-payment';

/** The card-payment decider under the runtime's generic contract. */
export const cardPaymentDecider: Decider<
  PaymentState,
  PaymentInput,
  PaymentEvent,
  Effect,
  PaymentPolicy
> = { initialState, decide, evolve };

/** The command-rejected event for a command the decider never saw (invalid, or an id conflict). */
export function rejectionEvent(args: RejectionArgs & { paymentId: string }): PaymentEvent {
  return { type: 'command-rejected', paymentId: args.paymentId, ...rejectionFields(args) };
}

/** The card-payment flow: sale, preauth → capture / void / return, status. */
export function cardPaymentFlow(policy: PaymentPolicy): Flow<PaymentState, PaymentEvent> {
  const flow = gatewayFlow<
    PaymentState,
    PaymentEvent,
    PaymentCommand | CardReferenceCommand,
    Timer,
    PaymentOperation,
    Effect
  >({
    name: CARD_PAYMENT_FLOW,
    commandTypes: commandTypesOf(CARD_PAYMENT_FAMILY),
    initialState,
    timerKinds: [
      ...OPERATION_TIMER_KINDS,
      'hold-expiry',
      'threeds-method-deadline',
      'card-ref-alert',
      SERIAL_QUERY_TIMER,
    ],
    operations: CARD_PAYMENT_OPERATIONS,
    ...(policy.resultDeadlineMs === undefined ? {} : { resultDeadlineMs: policy.resultDeadlineMs }),
    decide: (input, state, ctx) => decide(input, state, { ...ctx, policy }),
    effect: runtimeEffectOf,
    evolve,
    project(state) {
      return state.status === 'initial'
        ? { status: state.status, kind: null, settled: false }
        : {
            status: state.status,
            kind: state.kind,
            endpointId: state.merchant.endpointId,
            clientOrderId: state.clientOrderId,
            settled: isSettled(state),
          };
    },
    rejection: ({ sagaId, ...rest }) => rejectionEvent({ paymentId: sagaId, ...rest }),
    // The sale/preauth or follow-up in flight, or the card-reference request waiting beside it.
    resendWanted: (state, requestId) =>
      resendStillWanted(state, requestId) || cardRefResendWanted(state, requestId),
  });
  // A rebill a schedule started reports its outcome to the schedule, and a card reference taken
  // for a schedule starts it: child sagas, decided from the events the decision appends.
  return {
    ...flow,
    refusalEffects: (command, rejection, now) =>
      refusedRebillEffects(command.body as PaymentCommand | CardReferenceCommand, rejection, now),
    decide(input, state, ctx) {
      const decision = flow.decide(input, state, ctx);
      if (decision.outcome !== 'accepted') return decision;
      const after = foldEvents({ evolve }, state, decision.events);
      const children = [
        ...cycleOutcomeEffects(state, after, decision.events, ctx.now),
        ...scheduleStartEffects(state, decision.events, ctx.now),
      ];
      return children.length === 0
        ? decision
        : { ...decision, effects: [...decision.effects, ...children] };
    },
  };
}
