import type { DecidedOperation } from '../../../domain/gateway-operation/decided-operation';
import type {
  ApprovePayoutCommand,
  GatewayPayoutCheckRequest,
  GatewayPayoutPayRequest,
  GatewayPayoutRequest,
  GatewayPayoutFormRequest,
  GatewayStatusRequest,
  Money,
  RejectionCode,
  OneStepPayoutCommand,
  PayoutV4Command,
  PayoutFormCommand,
  PayoutBudgetAnswerCommand,
  PayoutCheckCommand,
  PayoutEvent,
  PayoutOperation,
  RejectPayoutCommand,
  RefreshPayoutStatusCommand,
  SettlePayoutByDecisionCommand,
} from '@payments/contracts';
import type { Draft, FlowDecision, IgnoreReason } from '../../../domain/decision';
import type {
  OperationInFlight,
  ResendGatewayRequest,
  ReusedOrderIdRefusal,
} from '../../../domain/gateway-operation/gateway-operation';
import type { SagaOperationInput } from '../../../domain/gateway-operation/single-operation';
import type { BudgetRequest, PublishHeldRequest } from '../../payout-budget/domain/requests';

/**
 * The two-step payout: payout-check → registered (awaiting approval until the deadline) →
 * approved → budget reserved (same transaction) → payout-pay → paid / declined / failed; or
 * rejected / expired, nothing paid. `reserving` never outlives the transaction of the approval:
 * the budget's answer is processed in it.
 *
 * A one-step payout (and a payout form): requested → `paying` with its request written held and
 * the reservation asked in the same transaction → granted: the request is published; refused:
 * `refused`, final, nothing sent. Then paid / declined / failed.
 */
export type PayoutStatus =
  | 'initial'
  | 'checking'
  | 'registered'
  | 'reserving'
  | 'paying'
  | 'paid'
  | 'declined'
  | 'failed'
  | 'rejected'
  | 'expired'
  | 'refused';

export const FINAL_PAYOUT_STATUSES: ReadonlySet<PayoutStatus> = new Set([
  'paid',
  'declined',
  'failed',
  'rejected',
  'expired',
  'refused',
]);

/** The gateway operation in flight (payout-check or payout-pay); the command that caused it is the payout-check, or the approval for payout-pay. */
export type PayoutInFlight = OperationInFlight<PayoutOperation>;

export interface InitialPayout {
  readonly status: 'initial';
  readonly version: number;
}

export interface OpenPayout {
  readonly status: Exclude<PayoutStatus, 'initial'>;
  /** two-step: payout-check → approval → payout-pay; one-step: `payout` / `payout-v4` at once. */
  readonly mode: 'two-step' | 'one-step';
  /**
   * The operation that opened the order, as its `payout-requested` named it (payout-check, or the
   * one-step `payout`, `payout-v4`, `payout-form`): what reconciliation's check of a one-step
   * payout names, as its history and its day's journal line do. Unset in states written before it
   * was kept (a one-step payout is then read as `payout`).
   */
  readonly opening?: PayoutOperation;
  readonly version: number;
  readonly payoutId: string;
  readonly merchant: { endpointId: string; merchantId?: string };
  readonly amount: Money;
  readonly clientOrderId: string;
  readonly gatewayOrderId?: string;
  /** The gateway's serial numbers of the order's settled requests (payout-check before payout-pay). */
  readonly requestSerials?: readonly string[];
  readonly approvalDeadline?: string;
  readonly inFlight?: PayoutInFlight;
  /**
   * Four eyes: the first approval of a payout above the endpoint's threshold, recorded while the
   * payout awaits the second (a different person with the approver role).
   */
  readonly recordedApproval?: {
    readonly commandId: string;
    readonly by: string;
    readonly role?: string;
  };
  /** Set by the approval: who, and the UTC day whose budget it draws on. */
  readonly approval?: { readonly commandId: string; readonly by: string; readonly day: string };
  /** The budget reservation is held (from grant until paid, or released on decline/failure). */
  readonly reserved?: true;
  /** The UTC day whose budget the payout draws on (the approval's, or a one-step request's). */
  readonly budgetDay?: string;
  /** The operation last settled by a decision of two people (a case, issue 33). */
  readonly decided?: DecidedOperation;
}

export type PayoutState = InitialPayout | OpenPayout;

export const initialPayoutState: PayoutState = { status: 'initial', version: 0 };

export type PayoutTimer =
  | { kind: 'status-poll'; requestId: string; attempt: number }
  | { kind: 'unknown-alert'; requestId: string }
  | { kind: 'result-deadline'; requestId: string; attempt: number }
  | { kind: 'approval-expiry' };
export type PayoutTimerKind = PayoutTimer['kind'];

export type PayoutDomainCommand =
  | OneStepPayoutCommand
  | PayoutV4Command
  | PayoutFormCommand
  | PayoutCheckCommand
  | ApprovePayoutCommand
  | RejectPayoutCommand
  | RefreshPayoutStatusCommand
  | PayoutBudgetAnswerCommand
  | SettlePayoutByDecisionCommand;

/** The commands that open a payout, and the operation each sends. */
export const OPENING_OPERATIONS = {
  'payout-check': 'payout-check',
  payout: 'payout',
  'payout-v4': 'payout-v4',
  'payout-form': 'payout-form',
} as const satisfies Record<string, PayoutOperation>;

/** Operations that open the gateway order (everything but payout-pay). */
export function opensPayoutOrder(operation: PayoutOperation): boolean {
  return operation !== 'payout-pay';
}

/** `about`: for a status reply, the operations its transaction type names (edge-normalised). */
export type PayoutInput = SagaOperationInput<PayoutDomainCommand, PayoutOperation, PayoutTimer>;

export type PayoutEffect =
  | {
      type: 'send-gateway-request';
      request:
        | GatewayPayoutCheckRequest
        | GatewayPayoutRequest
        | GatewayPayoutFormRequest
        | GatewayPayoutPayRequest
        | GatewayStatusRequest;
      /** Written, published only once the budget granted the reservation (budget.ts). */
      held?: true;
    }
  | PublishHeldRequest
  | ResendGatewayRequest
  | { type: 'schedule-timer'; timer: PayoutTimer; at: string }
  | { type: 'cancel-timer'; timer: PayoutTimerKind }
  | BudgetRequest;

/** Amount rules and the approval rules of an endpoint (minor units of the payout's currency). */
export interface PayoutLimits {
  readonly minMinor?: number;
  readonly maxMinor?: number;
  /** ISO 4217 codes accepted; undefined: any. */
  readonly currencies?: readonly string[];
  /** Most paid out (reserved) per endpoint, currency and UTC day. */
  readonly dailyLimitMinor?: number;
  /** How long a registered payout waits for its approval. */
  readonly approvalWindowMs?: number;
  /** Four eyes: a payout above this (minor units) needs two approvals by different people. */
  readonly fourEyesAboveMinor?: number;
}

export interface PayoutPolicy {
  readonly limits: {
    readonly default: PayoutLimits;
    readonly endpoints?: Readonly<Record<string, PayoutLimits>>;
  };
  readonly maxSendAttempts: number;
  readonly unknownAlertAfterMs: number;
  readonly neverReceivedAfterMs: number;
  readonly ownLimitWaitMs: number;
  /** See OperationRules.resultDeadlineMs (undefined: the default). */
  readonly resultDeadlineMs?: number;
  /** See OperationRules.gatewayRefusesReusedOrderId (undefined: no endpoint does). */
  readonly gatewayRefusesReusedOrderId?: ReusedOrderIdRefusal;
}

/** Approval window 10 minutes (below the sandbox's 15-minute payout-check lifetime). */
export const DEFAULT_APPROVAL_WINDOW_MS = 10 * 60 * 1000;
/** Without configuration: 10,000,000 minor units per endpoint, currency and day. */
export const DEFAULT_DAILY_LIMIT_MINOR = 10_000_000;

export const DEFAULT_PAYOUT_POLICY: PayoutPolicy = {
  limits: { default: { maxMinor: 100_000_000 } },
  maxSendAttempts: 5,
  unknownAlertAfterMs: 60 * 60 * 1000,
  neverReceivedAfterMs: 60_000,
  ownLimitWaitMs: 10 * 60 * 1000,
};

/** The endpoint's limits: its own entry over the default, field by field. */
export function limitsOf(policy: PayoutPolicy, endpointId: string): PayoutLimits {
  return { ...policy.limits.default, ...(policy.limits.endpoints?.[endpointId] ?? {}) };
}

/**
 * Amount and currency checked against an endpoint's limits before anything reaches the gateway
 * (payouts and transfers); undefined: within them. `what` names the operation in the message.
 */
export function amountRefusal(
  amount: Money,
  limits: PayoutLimits,
  what: string,
): [RejectionCode, string] | undefined {
  if (amount.minor <= 0) return ['INVALID_AMOUNT', `a ${what} needs an amount above zero`];
  if (limits.currencies !== undefined && !limits.currencies.includes(amount.currency))
    return ['CURRENCY_NOT_ALLOWED', `${amount.currency} is not allowed on this endpoint`];
  if (limits.minMinor !== undefined && amount.minor < limits.minMinor)
    return ['AMOUNT_BELOW_MINIMUM', `the minimum ${what} is ${limits.minMinor}`];
  if (limits.maxMinor !== undefined && amount.minor > limits.maxMinor)
    return ['AMOUNT_ABOVE_MAXIMUM', `the maximum ${what} is ${limits.maxMinor}`];
  return undefined;
}

export interface PayoutContext {
  /** ISO instant. */
  readonly now: string;
  readonly ids: { next(): string };
  readonly policy?: PayoutPolicy;
}

export type PayoutIgnoreReason = IgnoreReason;

export type PayoutDecision = FlowDecision<PayoutEvent, PayoutEffect>;

export type PayoutEventDraft = Draft<PayoutEvent, 'payoutId'>;

export { addMs, msBetween } from '../../../domain/decision';
