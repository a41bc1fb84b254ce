import { unhandled } from '../../../domain/decision';
import type { Decision, DecisionContext } from './decision';
import { decideCommand } from './decide-command';
import {
  decideCardReferenceCommand,
  decideCardReferenceResult,
  isCardReferenceCommand,
  isCardReferenceResult,
} from './card-reference';
import { decideOperation, inFlightOf } from './decide-gateway';
import { decideUploadResult, isUploadOperation } from './decide-payer-flows';
import { ignored } from './drafts';
import { decideTimer } from './decide-timer';
import {
  answerAfterPaymentDecision,
  askAfterPaymentDecision,
  decideByDecision,
} from './decide-decision';
import type { PaymentInput } from './inputs';
import { decideSerialResult, withSerialQuestion } from './decide-serial';
import type { PaymentState } from './state';

/**
 * The payment decider: pure, total, no I/O. Given an input and the current state it returns the
 * events to append (versions continue the state's), the effects to run in the same transaction, or
 * a rejection (itself a command-rejected event) or an ignore with its reason.
 */
export function decide(input: PaymentInput, state: PaymentState, ctx: DecisionContext): Decision {
  // A sale, preauth or rebill settled with its serial unknown asks for it (decide-serial.ts).
  return withSerialQuestion(decideInput(input, state, ctx), state, ctx);
}

function decideInput(input: PaymentInput, state: PaymentState, ctx: DecisionContext): Decision {
  switch (input.kind) {
    case 'command':
      if (input.command.type === 'settle-by-decision')
        return decideByDecision(input.command, state, ctx);
      return isCardReferenceCommand(input.command)
        ? decideCardReferenceCommand(input.command, state, ctx)
        : decideCommand(input.command, state, ctx);
    case 'gateway-result': {
      const contradiction = answerAfterPaymentDecision(input, state, ctx);
      if (contradiction !== undefined) return contradiction;
      // About the settled sale whose serial is asked for: only its serial is learnt.
      const serial = decideSerialResult(input, state, ctx);
      if (serial !== undefined) return serial;
      if (isCardReferenceResult(input.result))
        return decideCardReferenceResult(input.result, state, ctx);
      if (isUploadOperation(input.result.operation)) {
        const open = inFlightOf(state);
        return open === undefined
          ? ignored('NO_OPERATION_IN_FLIGHT')
          : decideUploadResult(input.result, open[0], open[1], ctx);
      }
      return decideOperation(input, state, ctx);
    }
    case 'callback': {
      const ask = askAfterPaymentDecision(input, state, ctx);
      if (ask !== undefined) return ask;
      return decideOperation(input, state, ctx);
    }
    case 'status-check-hint':
      return decideOperation(input, state, ctx);
    case 'timer-fired':
      return decideTimer(input.timer, state, ctx);
    default:
      return unhandled(input, 'input');
  }
}
