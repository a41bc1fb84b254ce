import type { Decision, DecisionContext } from './decision';
import { decideCommand } from './decide-command';
import { decideCallback, decideGatewayResult, decideStatusCheckHint } from './decide-gateway';
import { decideTimer } from './decide-timer';
import type { PaymentInput } from './inputs';
import type { PaymentState } from './state';

/**
 * The payment decider: pure, total, no I/O. Given an input and the current state it returns the
 * events to append (versions continue the state's), the effects to run in the same transaction, or
 * a rejection (itself a command-rejected event) or an ignore with its reason.
 */
export function decide(input: PaymentInput, state: PaymentState, ctx: DecisionContext): Decision {
  switch (input.kind) {
    case 'command':
      return decideCommand(input.command, state, ctx);
    case 'gateway-result':
      return decideGatewayResult(input.result, input.about, state, ctx);
    case 'callback':
      return decideCallback(input.callback, input.about, state, ctx);
    case 'status-check-hint':
      return decideStatusCheckHint(input.hint, state, ctx);
    case 'timer-fired':
      return decideTimer(input.timer, state, ctx);
    default: {
      const never: never = input;
      throw new Error(`unhandled input ${JSON.stringify(never)}`);
    }
  }
}
