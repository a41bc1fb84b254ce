import type { PanEligibilityCommand, PanEligibilityEvent } from '@payments/contracts';
import {
  type OperationVocabulary,
  reportError,
} from '../../../domain/gateway-operation/gateway-operation';
import {
  lifecycleVocabulary,
  operationRef,
  operationSagaDecider,
  sagaDecisions,
} from '../../../domain/gateway-operation/single-operation';
import type {
  CheckContext,
  CheckDecision,
  CheckEffect,
  CheckEventDraft,
  CheckOp,
  CheckState,
} from './model';

/**
 * The PAN-eligibility decider (pure): the command sends the check at once; its answer (approved →
 * eligible, declined → not eligible) comes from the shared gateway-operation module like every
 * other operation's, an unknown outcome resolved only by a status reply or a verified callback.
 */
export const decideCheck = operationSagaDecider({
  idField: 'checkId',
  command: decideCommand,
  vocabulary: checkVocabulary,
  rules: (ctx) => ctx.policy,
});

const decisions = sagaDecisions<PanEligibilityEvent, 'checkId'>('checkId', 'pan-eligibility-');

function decideCommand(
  command: PanEligibilityCommand,
  state: CheckState,
  ctx: CheckContext,
): CheckDecision {
  if (state.status !== 'initial')
    return decisions.rejected(state, command.checkId, ctx.now, command, {
      code: 'CHECK_ALREADY_EXISTS',
      message: 'a check with this id exists',
    });
  const requestId = ctx.ids.next();
  const { checkId, merchant } = command;
  return decisions.accepted(
    state,
    checkId,
    ctx.now,
    [
      {
        type: 'pan-eligibility-requested',
        commandId: command.commandId,
        operation: 'pan-eligibility',
        requestId,
        clientOrderId: checkId,
        merchant,
      },
    ],
    [
      {
        type: 'send-gateway-request',
        request: {
          operation: 'pan-eligibility',
          requestId,
          paymentId: checkId,
          merchant,
          clientOrderId: checkId,
          attempt: 1,
          requestedAt: ctx.now,
          cardRefId: command.cardRefId,
        },
      },
    ],
  );
}

/** How a check names its operation's outcomes: approved → eligible, declined → not eligible. */
function checkVocabulary(): OperationVocabulary<CheckOp, CheckEventDraft, CheckEffect> {
  const answered = (op: CheckOp, eligible: boolean, extra: object) => ({
    drafts: [
      { type: 'pan-eligibility-answered' as const, ...operationRef(op), eligible, ...extra },
    ],
    effects: [],
  });
  return {
    ...lifecycleVocabulary<CheckOp, CheckEventDraft, CheckEffect>('pan-eligibility-'),
    opensOrder: () => true,
    succeeded: (report, op) =>
      answered(
        op,
        true,
        report.gatewayOrderId === undefined ? {} : { gatewayOrderId: report.gatewayOrderId },
      ),
    declined: (report, op) => answered(op, false, reportError(report)),
  };
}
