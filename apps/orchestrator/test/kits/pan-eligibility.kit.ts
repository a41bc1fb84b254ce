/**
 * The PAN eligibility check (test support only).
 *
 *   panEligibilityWorld()
 *     .given(panEligibility(id))
 *     .when(eligibilityAnswer({ kind: 'unknown', reason: 'timeout' }))
 *     .then([{ type: 'pan-eligibility-outcome-unknown' }])
 */
import type { GatewayClassification, PanEligibilityEvent } from '@payments/contracts';
import {
  decideCheck,
  evolveCheck,
  initialCheckState,
} from '../../src/flows/pan-eligibility/domain';
import type {
  CheckContext,
  CheckEffect,
  CheckInput,
  CheckState,
} from '../../src/flows/pan-eligibility/domain/model';
import type { PayoutPolicy } from '../../src/flows/payout/domain';
import { T0, uuid } from './base.kit';
import { FlowWorld, sendResult } from './flow.kit';
import { MERCHANT, POLICY } from './payout.kit';

export function panEligibilityWorld() {
  return new FlowWorld<{
    input: CheckInput;
    state: CheckState;
    event: PanEligibilityEvent;
    effect: CheckEffect;
    context: CheckContext;
    policy: PayoutPolicy;
  }>({
    decide: decideCheck,
    evolve: evolveCheck,
    initial: initialCheckState,
    context: (now, ids, policy) => ({ now, ids, policy }),
    policy: POLICY,
    rejected: 'pan-eligibility-command-rejected',
    sagaOf: (input) => (input.kind === 'command' ? input.command.checkId : undefined),
  });
}

export const panEligibility = (checkId: string, cardRefId = '123456'): CheckInput => ({
  kind: 'command',
  command: {
    type: 'pan-eligibility',
    commandId: uuid(),
    checkId,
    merchant: MERCHANT,
    occurredAt: T0,
    cardRefId,
  },
});

/** The gateway's answer to the check in flight. */
export const eligibilityAnswer =
  (result: GatewayClassification) =>
  (state: CheckState, _now: string, checkId: string): CheckInput =>
    sendResult(state, checkId, 'pan-eligibility', result);
