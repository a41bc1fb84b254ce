import type { CardRef, MerchantRef, Money, ScheduleRule } from '@payments/contracts';
import type {
  OperationInFlight,
  ReusedOrderIdRefusal,
} from '../../../domain/gateway-operation/gateway-operation';
import type { DecidedOperation } from '../../../domain/gateway-operation/decided-operation';
import type { PaymentLimits } from '../../card-payment/domain/decision';

/** What a schedule charges, whom and when: fixed at creation except the amount (update-schedule). */
export interface ScheduleTerms {
  readonly scheduleId: string;
  readonly merchant: MerchantRef;
  readonly cardRef: CardRef;
  readonly amount: Money;
  readonly description: string;
  readonly rule: ScheduleRule;
}

/** A cycle's rebill payment in flight (started, no final outcome yet). */
export interface Charge {
  readonly cycle: number;
  readonly attempt: number;
  readonly paymentId: string;
  readonly amount: Money;
}

/** A declined cycle being retried: `declines` so far, at the amount the cycle was first charged. */
export interface Dunning {
  readonly cycle: number;
  readonly amount: Money;
  readonly declines: number;
}

interface Base {
  readonly version: number;
  readonly terms: ScheduleTerms;
}

/**
 * The schedule saga's state. At most one charge is in flight at a time, so cycles are charged in
 * order and each at most once (a charge's ids derive from schedule, cycle and attempt).
 */
export type ScheduleState =
  | { readonly status: 'initial'; readonly version: number }
  /** `nextCycle`: the cycle its timer will start (or the one in flight, `charge`). */
  | (Base & {
      readonly status: 'active';
      readonly nextCycle: number;
      readonly charge: Charge | null;
    })
  /** A cycle was declined; dunning retries run (`charge`: the retry in flight). */
  | (Base & {
      readonly status: 'past-due';
      readonly dunning: Dunning;
      readonly charge: Charge | null;
    })
  /** No charges; resume-schedule goes on from `nextCycle` by the skip rule. */
  | (Base & { readonly status: 'paused' | 'suspended'; readonly nextCycle: number })
  /** No more charges; a charge in flight when it was cancelled is still recorded. */
  | (Base & { readonly status: 'cancelled'; readonly charge: Charge | null })
  | (Base & { readonly status: 'completed' })
  /**
   * Registered with the gateway (create-recurring-payment), which charges every cycle itself: no
   * charge timer, no rebill. `registering`: the reply has not come (or was unknown and status
   * queries resolve it); `registration-failed`: refused or provably never arrived. In every one
   * the gateway's charges are recorded from verified callbacks confirmed by status queries.
   */
  | (Base &
      GatewayCharges & {
        readonly status: 'registering';
        readonly registration: Registration;
      })
  | (Base & GatewayCharges & { readonly status: 'registered'; readonly recurringPaymentId: string })
  | (Base & GatewayCharges & { readonly status: 'registration-failed' });

/** What a schedule the gateway charges knows of the gateway's charges. */
interface GatewayCharges {
  readonly charges: readonly GatewayCharge[];
  /**
   * The cycle the gateway's first charge (`<scheduleId>-1`) is: the cycles whose time had passed
   * when the schedule was created are not registered (absent on sagas older than the field: 0).
   */
  readonly firstCycle?: number;
  /**
   * Cycles alerted `not-found` (their charge not seen within the alert window) and still not seen:
   * each is still asked for at the slow cadence (`MISSING_CHARGE_TIMER_PREFIX`), and covered by
   * reconciliation, until the gateway's answer about it comes.
   */
  readonly missingCycles?: readonly number[];
  /**
   * The charge last settled by a decision of two people (a case; each charge keeps its own in
   * `charges[].decided`): the case service reads here that the saga took its decision.
   */
  readonly decided?: DecidedOperation;
}

/** The create-recurring-payment request of a schedule charged by the gateway, in flight. */
export type RegistrationOp = OperationInFlight<'create-recurring-payment'>;

/**
 * The registration as stored: the shared operation in flight, or the shape of sagas written
 * before the shared rules (`unknown`: status queries resolve it; `resent`: sent once more after
 * no trace), read through `registrationOp`.
 */
export type Registration =
  | RegistrationOp
  | { readonly requestId: string; readonly unknown: boolean; readonly resent: boolean };

/**
 * A gateway charge's confirmation as an operation in flight: the gateway's own request, which we
 * never send, asked about by status queries (its request id is the subject id of those queries).
 */
export type ChargeOp = OperationInFlight<'rebill'>;

/** A charge the gateway made on a registered schedule, keyed by its gateway order id. */
export interface GatewayCharge {
  readonly gatewayOrderId: string;
  readonly clientOrderId: string;
  readonly cycle: number;
  /** `confirming`: a verified callback named it, a status query about it is out. */
  readonly outcome: 'confirming' | 'charged' | 'declined';
  /** While confirming (absent on sagas written before the shared rules: read through `chargeOp`). */
  readonly op?: ChargeOp;
  /**
   * Settled by a decision (a case), not by the gateway's answer: `charged` is "done", `declined`
   * is "not done"; a later gateway answer about it that contradicts the decision reopens the case.
   */
  readonly decided?: DecidedOperation;
}

/** The schedule states whose charges the gateway makes. */
export type GatewayChargedState = Extract<
  ScheduleState,
  { status: 'registering' | 'registered' | 'registration-failed' }
>;

export function isGatewayCharged(state: ScheduleState): state is GatewayChargedState {
  return (
    state.status === 'registering' ||
    state.status === 'registered' ||
    state.status === 'registration-failed'
  );
}

/**
 * The shared operation timers of the registration and of each charge being confirmed: the status
 * poll and the unknown-outcome alert (payload: the operation timer; `{ poll }` on timers written
 * before the shared rules).
 */
export const REGISTRATION_STATUS_TIMER = 'registration-status';
export const REGISTRATION_ALERT_TIMER = 'registration-alert';
export const CHARGE_STATUS_TIMER_PREFIX = 'charge-status:';
export const CHARGE_ALERT_TIMER_PREFIX = 'charge-alert:';
/**
 * The next cycle the gateway should have charged by now (`payload.expectedCycle`): asked for by
 * its client order id once its time and the grace have passed, whether or not a callback came.
 */
export const EXPECTED_CHARGE_TIMER = 'expected-charge';
/**
 * The shared unknown-outcome alert of the cycle being asked for (payload: the operation timer):
 * no charge found within the alert window → `gateway-charge-alert` (not-found).
 */
export const EXPECTED_CHARGE_ALERT_TIMER = 'expected-charge-alert';
/**
 * A cycle alerted `not-found` is still asked for, at the slow cadence the shared no-trace rule
 * gives any operation alerted for a person (`<prefix><cycle>`; payload as the expected cycle's):
 * a gateway that charges late, its callbacks lost, is still found.
 */
export const MISSING_CHARGE_TIMER_PREFIX = 'missing-charge:';

export type ScheduleStatus = ScheduleState['status'];

export const initialScheduleState: ScheduleState = { status: 'initial', version: 0 };

/** A charge timer: start `cycle` (attempt 1) or its dunning retry (attempt > 1). */
export interface ChargeTimer {
  readonly cycle: number;
  readonly attempt: number;
}

export const CHARGE_TIMER = 'charge';

export interface SchedulePolicy {
  /** Delay before each dunning retry after a decline (e.g. 1, 3 and 7 days); then suspended. */
  readonly retryDelaysMs: readonly number[];
  /** Endpoints whose schedules are registered with the gateway and charged by it. */
  readonly gatewayRegistrationEndpoints?: readonly string[];
  /** Sends of a registration that was provably not sent before it fails. */
  readonly maxSendAttempts?: number;
  /**
   * The shared operation rules' figures for the registration, the charges' confirmations and the
   * search for an expected cycle's charge (undefined: the defaults — an hour, the shared no-trace window, no endpoint refusing a reused
   * client_orderid, the own-limit wait).
   */
  readonly unknownAlertAfterMs?: number;
  readonly neverReceivedAfterMs?: number;
  readonly gatewayRefusesReusedOrderId?: ReusedOrderIdRefusal;
  readonly ownLimitWaitMs?: number;
  /**
   * How long after a cycle's time the gateway's charge of it is asked for (the gateway charges on
   * the cycle's date at a time of day of its own). Undefined: DEFAULT_EXPECTED_CHARGE_GRACE_MS.
   */
  readonly expectedChargeGraceMs?: number;
  /**
   * The endpoints' limits every charge of a schedule faces (the card-payment flow's PAYMENT_LIMITS;
   * undefined: its defaults): an amount or currency they refuse is refused at create and update.
   */
  readonly limits?: PaymentLimits;
}

/** Does this endpoint register its schedules with the gateway? */
export function registersWithGateway(policy: SchedulePolicy, endpointId: string): boolean {
  return (policy.gatewayRegistrationEndpoints ?? []).includes(endpointId);
}

export const DEFAULT_SCHEDULE_POLICY: SchedulePolicy = {
  retryDelaysMs: [1, 3, 7].map((days) => days * 86_400_000),
};

export const DEFAULT_MAX_SEND_ATTEMPTS = 5;
export const DEFAULT_EXPECTED_CHARGE_GRACE_MS = 86_400_000;
export const DEFAULT_UNKNOWN_ALERT_AFTER_MS = 3_600_000;
