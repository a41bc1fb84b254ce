import { type RejectionArgs, rejectionFields } from '../../domain/rejection';
import type {
  CardReferenceCommand,
  PaymentCommand,
  PaymentEvent,
  PaymentOperation,
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

/**
 * The commands of sale, preauth, capture, void, return and status refresh; of card references:
 * rebill, create-card-ref, get-card-info; and the payer-facing ones: hosted forms,
 * account verification, the 3-D Secure uploads.
 */
export const CARD_PAYMENT_COMMANDS = [
  'sale',
  'preauth',
  'capture',
  'void',
  'return',
  'refresh-status',
  'rebill',
  'create-card-ref',
  'get-card-info',
  'sale-form',
  'preauth-form',
  'payment-form',
  'account-verification',
  'account-verification-form',
  'upload-method-url-result',
  'upload-cres-result',
  'upload-pares-result',
] as const satisfies ReadonlyArray<PaymentCommand['type'] | CardReferenceCommand['type']>;

const TIMER_KINDS: readonly Timer['kind'][] = [
  'status-poll',
  'unknown-alert',
  'hold-expiry',
  'threeds-method-deadline',
  'card-ref-alert',
];

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
    commandTypes: CARD_PAYMENT_COMMANDS,
    initialState,
    timerKinds: TIMER_KINDS,
    operations: CARD_PAYMENT_OPERATIONS,
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
