import {
  commandTypesOf,
  PAN_ELIGIBILITY_FAMILY,
  type PanEligibilityCommand,
  type PanEligibilityEvent,
  type PanEligibilityOperation,
} from '@payments/contracts';
import {
  OPERATION_TIMER_KINDS,
  type OperationRules,
  type OperationTimer,
} from '../../domain/gateway-operation/gateway-operation';
import { type RejectionArgs, rejectionFields } from '../../domain/rejection';
import type { Flow } from '../../runtime/flow';
import {
  gatewayFlow,
  runtimeEffectOf,
  singleOperationSaga,
  transactionTypes,
} from '../../runtime/flow-binding';
import {
  type CheckEffect,
  type CheckState,
  decideCheck,
  evolveCheck,
  initialCheckState,
} from './domain';

export const PAN_ELIGIBILITY_FLOW = 'pan-eligibility';

export function checkRejectionEvent(args: RejectionArgs & { sagaId: string }): PanEligibilityEvent {
  return {
    type: 'pan-eligibility-command-rejected',
    checkId: args.sagaId,
    ...rejectionFields(args),
  };
}

/** PAN eligibility: can the card behind a gateway card reference receive payouts? */
export function panEligibilityFlow(rules: OperationRules): Flow<CheckState, PanEligibilityEvent> {
  return gatewayFlow<
    CheckState,
    PanEligibilityEvent,
    PanEligibilityCommand,
    OperationTimer,
    PanEligibilityOperation,
    CheckEffect
  >({
    name: PAN_ELIGIBILITY_FLOW,
    commandTypes: commandTypesOf(PAN_ELIGIBILITY_FAMILY),
    initialState: initialCheckState,
    timerKinds: OPERATION_TIMER_KINDS,
    operations: transactionTypes<PanEligibilityOperation>({
      'pan-eligibility': ['pan-eligibility'],
    }),
    ...(rules.resultDeadlineMs === undefined ? {} : { resultDeadlineMs: rules.resultDeadlineMs }),
    decide: (input, state, ctx) => decideCheck(input, state, { ...ctx, policy: rules }),
    effect: (effect) => runtimeEffectOf(effect),
    evolve: evolveCheck,
    rejection: checkRejectionEvent,
    ...singleOperationSaga<CheckState>('pan-eligibility', 'checking'),
  });
}
