import type {
  PanEligibilityCommand,
  PanEligibilityEvent,
  PanEligibilityOperation,
  RejectionCode,
} from '@payments/contracts';
import { stampDrafts } from '../../../domain/decision';
import {
  operationDecision,
  type OperationInFlight,
  type OperationVocabulary,
  reportError,
} from '../../../domain/gateway-operation';
import type {
  CheckContext,
  CheckDecision,
  CheckEffect,
  CheckEventDraft,
  CheckInput,
  CheckState,
  OpenCheck,
} from './model';

type CheckOp = OperationInFlight<PanEligibilityOperation>;

/**
 * The PAN-eligibility decider (pure): the command sends the check at once; its answer (approved →
 * eligible, declined → not eligible) comes from the shared gateway-operation module like every
 * other operation's, an unknown outcome resolved only by a status reply or a verified callback.
 */
export function decideCheck(
  input: CheckInput,
  state: CheckState,
  ctx: CheckContext,
): CheckDecision {
  if (input.kind === 'command') return decideCommand(input.command, state, ctx);
  const open = state.status === 'initial' ? undefined : state;
  const op = open?.inFlight;
  return operationDecision<CheckOp, PanEligibilityEvent, 'checkId', OpenCheck, CheckEffect>(
    input,
    open && op && { state: open, sagaId: open.checkId, idField: 'checkId', op },
    () => checkVocabulary(),
    ctx.policy,
    ctx,
  );
}

function stamp(state: CheckState, checkId: string, now: string, drafts: CheckEventDraft[]) {
  return stampDrafts<PanEligibilityEvent, 'checkId'>(state.version, { checkId }, now, drafts);
}

function decideCommand(
  command: PanEligibilityCommand,
  state: CheckState,
  ctx: CheckContext,
): CheckDecision {
  if (state.status !== 'initial') {
    const code: RejectionCode = 'CHECK_ALREADY_EXISTS';
    const message = 'a check with this id exists';
    return {
      outcome: 'rejected',
      rejection: { code, message },
      events: stamp(state, command.checkId, ctx.now, [
        {
          type: 'pan-eligibility-command-rejected',
          commandId: command.commandId,
          commandType: command.type,
          reason: code,
          message,
        },
      ]),
      effects: [],
    };
  }
  const requestId = ctx.ids.next();
  const { checkId, merchant } = command;
  return {
    outcome: 'accepted',
    events: stamp(state, checkId, ctx.now, [
      {
        type: 'pan-eligibility-requested',
        commandId: command.commandId,
        operation: 'pan-eligibility',
        requestId,
        clientOrderId: checkId,
        merchant,
      },
    ]),
    effects: [
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
  };
}

function checkVocabulary(): OperationVocabulary<CheckOp, CheckEventDraft, CheckEffect> {
  const ref = (op: CheckOp) =>
    ({ commandId: op.commandId, operation: op.operation, requestId: op.requestId }) as const;
  const answered = (op: CheckOp, eligible: boolean, extra: object) => ({
    drafts: [{ type: 'pan-eligibility-answered' as const, ...ref(op), eligible, ...extra }],
    effects: [],
  });
  return {
    opensOrder: () => true,
    acceptedByGateway: (op, facts) => ({
      type: 'pan-eligibility-accepted-by-gateway',
      ...ref(op),
      ...facts,
    }),
    outcomeUnknown: (op, facts) => ({
      type: 'pan-eligibility-outcome-unknown',
      ...ref(op),
      ...facts,
    }),
    operationResent: (op, attempt, unknownSince) => ({
      type: 'pan-eligibility-operation-resent',
      ...ref(op),
      attempt,
      unknownSince,
    }),
    succeeded: (report, op) =>
      answered(
        op,
        true,
        report.gatewayOrderId === undefined ? {} : { gatewayOrderId: report.gatewayOrderId },
      ),
    declined: (report, op) => answered(op, false, reportError(report)),
    failed: (op, why) => ({
      drafts: [{ type: 'pan-eligibility-failed', ...ref(op), ...why }],
      effects: [],
    }),
  };
}
