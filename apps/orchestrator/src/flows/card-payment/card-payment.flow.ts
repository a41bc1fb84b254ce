import { type RejectionArgs, rejectionFields } from '../../domain/rejection';
import type { PaymentCommand, PaymentEvent } from '@payments/contracts';
import type { Decider, Flow, RuntimeEffect, SagaInput } from '../../runtime/flow';
import {
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
import { callbackInput, gatewayResultInput } from './gateway-vocabulary';

export const CARD_PAYMENT_FLOW = 'card-payment';

/** The commands of sale, preauth, capture, void, return and status refresh. */
export const CARD_PAYMENT_COMMANDS = [
  'sale',
  'preauth',
  'capture',
  'void',
  'return',
  'refresh-status',
] as const satisfies ReadonlyArray<PaymentCommand['type']>;

const TIMER_KINDS: ReadonlySet<string> = new Set<Timer['kind']>([
  'status-poll',
  'unknown-alert',
  'hold-expiry',
]);

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

/** A runtime input as the card-payment decider's input (undefined: not one of this flow's). */
function toDomainInput(input: SagaInput): PaymentInput | undefined {
  switch (input.kind) {
    case 'command':
      return { kind: 'command', command: input.command.body as PaymentCommand };
    case 'gateway-result':
      return gatewayResultInput(input.result);
    case 'callback':
      return callbackInput(input.callback);
    case 'status-check-hint':
      return { kind: 'status-check-hint', hint: input.hint };
    case 'timer':
      return TIMER_KINDS.has(input.timer.kind)
        ? { kind: 'timer-fired', timer: input.timer.payload as Timer }
        : undefined;
    default: {
      const never: never = input;
      throw new Error(`unhandled input ${JSON.stringify(never)}`);
    }
  }
}

/** The decider's effects in the runtime's vocabulary (timers keyed by their kind). */
function toRuntimeEffect(effect: Effect): RuntimeEffect {
  switch (effect.type) {
    case 'send-gateway-request':
    case 'resend-gateway-request':
      return effect;
    case 'schedule-timer':
      return { type: 'set-timer', kind: effect.timer.kind, at: effect.at, payload: effect.timer };
    case 'cancel-timer':
      return { type: 'cancel-timer', kind: effect.timer };
    default: {
      const never: never = effect;
      throw new Error(`unhandled effect ${JSON.stringify(never)}`);
    }
  }
}

/** The card-payment flow: sale, preauth → capture / void / return, status. */
export function cardPaymentFlow(policy: PaymentPolicy): Flow<PaymentState, PaymentEvent> {
  return {
    name: CARD_PAYMENT_FLOW,
    commandTypes: CARD_PAYMENT_COMMANDS,
    initialState,
    decide(input, state, ctx) {
      const domainInput = toDomainInput(input);
      if (domainInput === undefined)
        return { outcome: 'ignored', reason: 'TIMER_OBSOLETE', events: [], effects: [] };
      const decision = decide(domainInput, state, { ...ctx, policy });
      switch (decision.outcome) {
        case 'accepted':
        case 'ignored':
          return { ...decision, effects: decision.effects.map(toRuntimeEffect) };
        case 'rejected':
          return decision;
        default: {
          const never: never = decision;
          throw new Error(`unhandled decision ${JSON.stringify(never)}`);
        }
      }
    },
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
    resendWanted: resendStillWanted,
  };
}
