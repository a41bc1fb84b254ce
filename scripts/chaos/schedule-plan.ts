/**
 * The recurring-schedule phase of the chaos run, as data: its endpoints, what the orchestrator
 * needs for it, the schedules and actions it plans and what it observed (the workload in
 * `schedules.ts`, the verdict in `schedule-checks.ts`).
 */
import type { Money, ScheduleEvent } from '@payments/contracts';
import type { ReplicaName } from '../stack/payment-stack';

/** Endpoints of the phase: its own schedules rebill on one, the other registers with the gateway. */
export const OWN_SCHEDULE_ENDPOINT = '1115';
export const GATEWAY_SCHEDULE_ENDPOINT = '1114';
/** How long after a registered cycle's time the orchestrator asks for its charge (its clock). */
export const GATEWAY_CHARGE_GRACE_SECONDS = 60;
/** A day in seconds. */
export const DAY = 86_400;
const DAY_MS = DAY * 1000;

/** What the orchestrator needs for the phase (added to the chaos run's orchestrator env). */
export function scheduleEnv(): Record<string, string> {
  return {
    // The clock control (POST /test-controls/clock/advance): cycles come due in seconds.
    TEST_CONTROLS_ENABLED: 'true',
    SCHEDULE_GATEWAY_REGISTRATION_ENDPOINTS: GATEWAY_SCHEDULE_ENDPOINT,
    SCHEDULE_GATEWAY_CHARGE_GRACE_SECONDS: String(GATEWAY_CHARGE_GRACE_SECONDS),
    // A declined cycle is retried a day later (the phase moves a day at a time), then suspended.
    SCHEDULE_DUNNING_RETRY_SECONDS: String(DAY),
  };
}

export interface ScheduleAction {
  readonly target: Exclude<ReplicaName, 'gateway-sandbox'>;
  readonly signal: 'SIGKILL' | 'SIGTERM';
}

export interface ScheduleWorkload {
  /** Schedules the orchestrator charges itself (a rebill per cycle). */
  readonly own: number;
  /** Schedules registered with the gateway (it charges them). */
  readonly gateway: number;
  /** Daily cycles of each schedule (at least 3: the aimed faults hit cycles 1 and 2). */
  readonly cycles: number;
  /** One after each clock step, in order, while the step's charges are in flight. */
  readonly actions: readonly ScheduleAction[];
  /** How long a step waits for its due cycles to be reported or alerted. */
  readonly stepTimeoutSeconds: number;
}

/** A schedule of the phase: daily at 00:00 UTC from `startDate`, `cycles` times. */
export interface ScheduleSpec {
  readonly scheduleId: string;
  readonly chargedBy: 'orchestrator' | 'gateway';
  readonly endpointId: string;
  readonly amount: Money;
  readonly startDate: string;
  readonly cycles: number;
}

export interface ObservedScheduleEvent {
  readonly event: ScheduleEvent;
  readonly ceId: string;
}

export interface ScheduleActionRecord extends ScheduleAction {
  /** The clock step it followed. */
  readonly step: number;
  readonly recoveryMs: number;
}

export interface SchedulePhase {
  readonly specs: ScheduleSpec[];
  /** Seconds each step moved both clocks, and how long its due cycles took to be settled. */
  readonly steps: { advancedSeconds: number; settledMs?: number }[];
  readonly actions: ScheduleActionRecord[];
  /** The orchestrator's clock offset at the end (seconds). */
  readonly advancedSeconds: number;
  readonly seconds: number;
}

/** When cycle `n` of a daily 00:00 UTC schedule is due (epoch ms). */
export function cycleDueAt(spec: Pick<ScheduleSpec, 'startDate'>, cycle: number): number {
  return Date.parse(`${spec.startDate}T00:00:00Z`) + cycle * DAY_MS;
}
