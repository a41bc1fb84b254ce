import type { AnyPanEligibilityCommand, PanEligibilityEvent } from '@payments/contracts';
import {
  type OperationVocabulary,
  reportError,
} from '../../../domain/gateway-operation/gateway-operation';
import {
  lifecycleVocabulary,
  operationRef,
  operationSagaDecider,
  sagaDecisions,
  settlementDecision,
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

/** The decisions a check takes in a case: whether the card is eligible is the gateway's answer. */
export const CHECK_DECISIONS = ['not-done'] as const;

function decideCommand(
  command: AnyPanEligibilityCommand,
  state: CheckState,
  ctx: CheckContext,
): CheckDecision {
  // A decision of two people (a case) about the check in flight: the one shared rule.
  if (command.type === 'pan-eligibility-settle-by-decision') {
    if (state.status === 'initial')
      return decisions.rejected(state, command.checkId, ctx.now, command, {
        code: 'INVALID_STATE',
        message: 'no such check',
      });
    if (command.merchant.endpointId !== state.merchant.endpointId)
      return decisions.rejected(state, command.checkId, ctx.now, command, {
        code: 'MERCHANT_MISMATCH',
        message: 'the check belongs to another endpoint',
      });
    return settlementDecision(
      command,
      state,
      state.checkId,
      checkVocabulary(),
      decisions,
      ctx.now,
      CHECK_DECISIONS,
    );
  }
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
