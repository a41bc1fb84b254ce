import type { ApprovePayoutCommand, RejectionCode } from '@payments/contracts';
import type { OpenPayout, PayoutLimits } from './model';

/**
 * Four eyes for payouts (pure). An approval of a payout whose amount is above the endpoint's
 * `fourEyesAboveMinor` counts only with a second one: the first is recorded, payout-pay follows
 * the second, given by a different person (`approvedBy`) holding the approver role. The same
 * person approving twice is refused, and so is a second approval without the approver role; a
 * rejection needs no second person (it pays nothing).
 */
export type ApprovalStep =
  /** The approval completes: reserve the budget, then payout-pay. */
  | { readonly kind: 'approve'; readonly firstApprovedBy?: string }
  /** The first of two approvals: recorded, nothing reserved or sent. */
  | { readonly kind: 'record'; readonly fourEyesAboveMinor: number }
  | { readonly kind: 'refuse'; readonly code: RejectionCode; readonly message: string };

/** Whether the payout's approvals need two people. */
export function needsFourEyes(state: Pick<OpenPayout, 'amount'>, limits: PayoutLimits): boolean {
  return limits.fourEyesAboveMinor !== undefined && state.amount.minor > limits.fourEyesAboveMinor;
}

/** What an approval of a registered payout (within its window) does. */
export function approvalStep(
  state: Pick<OpenPayout, 'amount' | 'recordedApproval'>,
  approval: Pick<ApprovePayoutCommand, 'approvedBy' | 'approverRole'>,
  limits: PayoutLimits,
): ApprovalStep {
  const threshold = limits.fourEyesAboveMinor;
  if (threshold === undefined || !needsFourEyes(state, limits)) return { kind: 'approve' };
  const first = state.recordedApproval;
  if (first === undefined) return { kind: 'record', fourEyesAboveMinor: threshold };
  if (first.by === approval.approvedBy) {
    return {
      kind: 'refuse',
      code: 'PAYOUT_SAME_APPROVER',
      message: `${approval.approvedBy} gave the first approval; the second must come from another person (four eyes above ${threshold} minor units)`,
    };
  }
  if (approval.approverRole !== 'approver') {
    return {
      kind: 'refuse',
      code: 'PAYOUT_APPROVER_ROLE_REQUIRED',
      message: `the second approval of a payout above ${threshold} minor units needs the approver role (${approval.approvedBy} is ${approval.approverRole ?? 'of no stated role'})`,
    };
  }
  return { kind: 'approve', firstApprovedBy: first.by };
}
