import { z } from 'zod';
import { byType, flowFamily, sagaCommands, unionOf } from './flow-family';
import {
  commandRejectedEvent,
  OPERATION_EVENT_FIELDS,
  operationLifecycle,
  sagaEvents,
  settleByDecisionCommand,
  UnknownConcern,
} from './operation-events';
import { GatewayStatus, Instant, MerchantRef, Money, Uuid } from './primitives';

/**
 * Recurring schedules: the commands and events of the orchestrator's schedule saga.
 * A schedule is addressed by `scheduleId` (its saga id) instead of `paymentId`; each charge is a
 * rebill payment of its own with a payment id derived from (schedule, cycle, attempt).
 */

/** A calendar date YYYY-MM-DD that exists (years 1900–9999). */
export function isCalendarDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const d = new Date(Date.UTC(year, month - 1, day));
  return (
    year >= 1900 &&
    d.getUTCFullYear() === year &&
    d.getUTCMonth() === month - 1 &&
    d.getUTCDate() === day
  );
}

/** An IANA time zone the runtime's ICU data knows (e.g. `Europe/Berlin`). */
export function isIanaTimeZone(text: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: text });
    return true;
  } catch {
    return false;
  }
}

const LocalDate = z
  .string()
  .refine(isCalendarDate, 'a calendar date YYYY-MM-DD (years 1900–9999) that exists');

export const ScheduleRule = z.strictObject({
  period: z.enum(['day', 'week', 'month', 'year']),
  /** Every `interval` periods. */
  interval: z.number().int().min(1).max(366),
  /** Local date of the first cycle, the anchor of every later one. */
  startDate: LocalDate,
  /** Local time of day every cycle is due at (24 h). */
  timeOfDay: z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM (24 h)'),
  timeZone: z.string().min(1).max(64).refine(isIanaTimeZone, 'an IANA time zone'),
  end: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('never') }),
    z.strictObject({ kind: z.literal('count'), count: z.number().int().min(1).max(100_000) }),
    z.strictObject({ kind: z.literal('until'), date: LocalDate }),
  ]),
});
export type ScheduleRule = z.infer<typeof ScheduleRule>;

/** A card reference at the gateway (create-card-ref): its id only, never card data. */
export const CardRef = z.strictObject({
  refId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'the gateway card reference id'),
});
export type CardRef = z.infer<typeof CardRef>;

/** What a schedule charges every cycle, and a rebill: `minor` > 0. */
const PositiveAmount = Money.refine((m) => m.minor > 0, 'a positive amount');
const Description = z.string().min(1).max(255);
/** A schedule's cycle (0 the first) and a charge's dunning attempt (1 the first). */
const Cycle = z.number().int().min(0);
const Attempt = z.number().int().min(1);

const scheduleCommand = sagaCommands('scheduleId');

export const CreateScheduleCommand = scheduleCommand('create-schedule', {
  cardRef: CardRef,
  /** Charged every cycle; `minor` > 0. */
  amount: PositiveAmount,
  description: Description,
  rule: ScheduleRule,
});
export type CreateScheduleCommand = z.infer<typeof CreateScheduleCommand>;

/**
 * A schedule to start on the card reference a create-card-ref takes from a successful payment
 * (everything of create-schedule but the reference and the merchant, which are the payment's).
 */
export const ScheduleOnNewCardRef = z.strictObject({
  scheduleId: Uuid,
  amount: PositiveAmount,
  description: Description,
  rule: ScheduleRule,
});
export type ScheduleOnNewCardRef = z.infer<typeof ScheduleOnNewCardRef>;

/** A new amount, charged from the next cycle that starts (a charge in flight or in dunning keeps its own). */
export const UpdateScheduleCommand = scheduleCommand('update-schedule', { amount: PositiveAmount });
export type UpdateScheduleCommand = z.infer<typeof UpdateScheduleCommand>;

/**
 * Internal: the rebill saga of a cycle reports its final outcome to its schedule (a start-saga
 * effect of the rebill flow; it names the charge's derived payment id, which the schedule checks).
 */
export const RecordCycleOutcomeCommand = scheduleCommand('record-cycle-outcome', {
  cycle: Cycle,
  attempt: Attempt,
  paymentId: Uuid,
  outcome: z.enum(['approved', 'declined', 'failed']),
  code: z.string().max(64).optional(),
});
export type RecordCycleOutcomeCommand = z.infer<typeof RecordCycleOutcomeCommand>;

/**
 * Internal: the case service's settlement of a gateway charge of a registered schedule whose
 * outcome the gateway never cleared (a reported charge being confirmed, alerted), by an approved
 * decision of two people (issue 33): "done" at the gateway's amount, or "not done".
 */
export const SettleScheduleChargeByDecisionCommand = settleByDecisionCommand(
  'scheduleId',
  'schedule-charge-',
);
export type SettleScheduleChargeByDecisionCommand = z.infer<
  typeof SettleScheduleChargeByDecisionCommand
>;

/** The schedule cycle and dunning attempt a rebill charges. */
export const ScheduleLink = z.strictObject({ scheduleId: Uuid, cycle: Cycle, attempt: Attempt });

const paymentCommand = sagaCommands('paymentId');

/**
 * A charge of a card reference with the cardholder absent (make-rebill). A schedule starts one per
 * cycle and dunning attempt with ids derived from (schedule, cycle, attempt) and names itself in
 * `schedule`, so the rebill saga reports its final outcome back (record-cycle-outcome).
 */
export const RebillCommand = paymentCommand('rebill', {
  cardRef: CardRef,
  amount: PositiveAmount,
  order: z.strictObject({ description: Description }),
  schedule: ScheduleLink.optional(),
});
export type RebillCommand = z.infer<typeof RebillCommand>;

/**
 * Take a card reference from this payment (create-card-ref): a sale or preauth in a final
 * successful status. The reference lives on the payment (`card-ref-created`).
 */
export const CreateCardRefCommand = paymentCommand('create-card-ref', {
  /** Start this recurring schedule on the new reference once the gateway made it. */
  schedule: ScheduleOnNewCardRef.optional(),
});
export type CreateCardRefCommand = z.infer<typeof CreateCardRefCommand>;

/** BIN, last four and brand of this payment's card reference (get-card-info). */
export const GetCardInfoCommand = paymentCommand('get-card-info', {});
export type GetCardInfoCommand = z.infer<typeof GetCardInfoCommand>;

/** The card-reference commands hosted by the card-payment saga (addressed by `paymentId`). */
export const CARD_REFERENCE_COMMAND_SCHEMAS = byType(
  RebillCommand,
  CreateCardRefCommand,
  GetCardInfoCommand,
);
export type CardReferenceCommand = RebillCommand | CreateCardRefCommand | GetCardInfoCommand;

// ---- the schedule family ------------------------------------------------------------------------

const event = sagaEvents('scheduleId');

const cycleRef = { cycle: Cycle };
/** The next cycle to charge and when it is due (absent: the schedule has ended). */
const nextDue = { nextCycle: Cycle.optional(), nextDueAt: Instant.optional() };
/** A cycle's rebill payment (`attempt` > 1: a dunning retry). */
const cycleCharge = { ...cycleRef, attempt: Attempt, paymentId: Uuid };

/** A charge the gateway made of a schedule registered with it (create-recurring-payment). */
const gatewayCharge = {
  ...cycleRef,
  /** The gateway's order of this charge (`orderid`). */
  gatewayOrderId: z.string().min(1).max(128),
  /** The charge's `client_orderid` as the gateway named it: `<scheduleId>-<n>`, cycle n − 1. */
  clientOrderId: z.string().min(1).max(128),
};

/** A gateway charge's confirmation as an operation (its request id: the status queries' subject). */
const chargeLifecycle = operationLifecycle('scheduleId', 'schedule-charge-', z.enum(['rebill']));

/**
 * The schedule family: the schedule saga's commands and events. Its `command-rejected` is not in
 * the family's table: the type is the card payments' (the same event, addressed by `scheduleId`),
 * listed once with theirs.
 */
export const SCHEDULE_FAMILY = flowFamily({
  name: 'recurring-schedule',
  sagaIdField: 'scheduleId',
  commands: byType(
    CreateScheduleCommand,
    UpdateScheduleCommand,
    scheduleCommand('pause-schedule', {}),
    scheduleCommand('resume-schedule', {}),
    scheduleCommand('cancel-schedule', {}),
    /**
     * Asks the gateway now about what a schedule registered with it has in flight: its registration
     * (create-recurring-payment) and every charge still being confirmed; the answers decide, as for a
     * card payment's `refresh-status`. Moves no money. A schedule we charge ourselves has nothing of
     * its own in flight: its cycle's rebill is a card payment, refreshed as one.
     */
    scheduleCommand('refresh-schedule-status', {}),
    RecordCycleOutcomeCommand,
    SettleScheduleChargeByDecisionCommand,
  ),
  events: byType(
    event('schedule-created', {
      merchant: MerchantRef,
      cardRef: CardRef,
      amount: Money,
      description: Description,
      rule: ScheduleRule,
      /** Cycles whose time had passed when the schedule was created (never charged). */
      skippedCycles: z.number().int().min(0),
      ...nextDue,
      /**
       * `gateway`: the endpoint registers schedules with the gateway (create-recurring-payment), which
       * charges every cycle itself; the orchestrator starts no rebill and records the gateway's
       * charges (`gateway-cycle-charged`). Absent: each cycle is a rebill the orchestrator starts.
       */
      chargedBy: z.literal('gateway').optional(),
    }),
    event('schedule-updated', { amount: Money }),
    event('schedule-paused', {}),
    /** Cycles due during the pause (or suspension) are skipped, not caught up. */
    event('schedule-resumed', { skippedCycles: z.number().int().min(0), ...nextDue }),
    event('schedule-cancelled', {}),
    /** The last cycle is behind us (end by count or date). */
    event('schedule-completed', {}),
    /** A cycle is due: its rebill payment was started. */
    event('cycle-charge-requested', { ...cycleCharge, amount: Money, dueAt: Instant }),
    /** The cycle's rebill payment was approved (its own `approved` event says the money moved). */
    event('cycle-charged', { ...cycleCharge, amount: Money, ...nextDue }),
    /** The cycle's rebill payment was declined or failed; `retryAt`: the dunning retry, if any. */
    event('cycle-charge-declined', {
      ...cycleCharge,
      outcome: z.enum(['declined', 'failed']),
      code: z.string().max(64).optional(),
      retryAt: Instant.optional(),
    }),
    /** The first decline of a cycle: dunning retries follow. */
    event('schedule-past-due', { ...cycleRef, retryAt: Instant }),
    /** A dunning retry was approved: the schedule is current again. */
    event('schedule-recovered', cycleRef),
    /** Every dunning retry was declined: no more charges until `resume-schedule`. */
    event('schedule-suspended', cycleRef),

    // Schedules registered with the gateway (create-recurring-payment).

    /**
     * The registration's outcome is not known (timeout, 5xx, the gateway's own `unknown`): resolved by
     * status queries, never guessed. `alert` once a person must look (unknown for the alert time, no
     * trace at the gateway after the resend, another amount reported: `concern`); polls go on.
     * `since`, `concern`, `reportedAmount` are absent on events written before the shared rules.
     */
    event('schedule-registration-unknown', {
      reason: z.string().max(256),
      alert: z.literal(true).optional(),
      since: Instant.optional(),
      concern: UnknownConcern.optional(),
      reportedAmount: Money.optional(),
    }),
    /**
     * The gateway took the registration but its reply named no recurring-payment-id yet, or a status
     * reply showed it in progress: no longer unknown; status queries bring its outcome.
     */
    event('schedule-registration-accepted', OPERATION_EVENT_FIELDS.acceptedByGateway),
    /**
     * The gateway still had no trace of the registration after its deadline: sent once more, same
     * client order id (which the gateway refuses as a duplicate if the first arrived after all).
     * `attempt` and `unknownSince` are absent on events written before the shared rules.
     */
    event('schedule-registration-resent', {
      attempt: OPERATION_EVENT_FIELDS.operationResent.attempt.optional(),
      unknownSince: Instant.optional(),
    }),
    /** The gateway registered the schedule (`resolvedBy`: its reply, or a status query after unknown). */
    event('schedule-registered', {
      recurringPaymentId: z.string().min(1).max(64),
      resolvedBy: z.enum(['reply', 'status']),
    }),
    /**
     * The gateway refused the registration (a rejected request, or a status reply declining it), or it
     * provably never left (not sent): nothing will be charged. `no-trace` only on events written before
     * the shared rules (no trace now leaves the registration unknown with the alert raised).
     */
    event('schedule-registration-failed', {
      reason: z.enum(['rejected', 'not-sent', 'no-trace']),
      code: z.string().max(64).optional(),
      message: z.string().max(1024),
    }),
    /**
     * A verified callback named a charge of the registered schedule; nothing is recorded as charged
     * before a status query about that very order confirms it.
     */
    event('gateway-charge-reported', { ...gatewayCharge, reportedStatus: GatewayStatus }),
    /**
     * A status reply showed a reported charge in progress (or named its serial number): no longer
     * unknown; status queries about that very order bring its outcome.
     */
    event('gateway-charge-accepted', {
      ...gatewayCharge,
      serialNumber: OPERATION_EVENT_FIELDS.acceptedByGateway.serialNumber,
    }),
    /**
     * A reported charge's outcome is not known (the gateway's own `unknown`, or no status answer about
     * it yet): `alert` once a person must look — unknown for the alert time, no trace of its order at
     * the gateway (`concern: no-trace`), or another amount than the schedule's (`amount-mismatch`,
     * with `reportedAmount`). Polls go on; nothing is assumed charged.
     */
    event('gateway-charge-outcome-unknown', {
      ...gatewayCharge,
      ...OPERATION_EVENT_FIELDS.outcomeUnknown,
    }),
    /** The gateway charged a cycle of the registered schedule, confirmed by a status reply (money moved). */
    event('gateway-cycle-charged', {
      ...gatewayCharge,
      amount: Money,
      approvalCode: z.string().max(64).optional(),
    }),
    /** The gateway's charge of a cycle was declined (confirmed by a status reply); the gateway's own rules apply. */
    event('gateway-cycle-declined', {
      ...gatewayCharge,
      outcome: z.enum(['declined', 'error', 'filtered']),
      code: z.string().max(64).optional(),
    }),
    /**
     * A person must look at a cycle of a registered schedule: `not-found` — its time (and the grace
     * for the gateway's own time of day) has passed and status queries by the cycle's client order id
     * still find no charge; `unconfirmed` (events written before the shared rules; now
     * `gateway-charge-outcome-unknown` with `alert`) — a reported charge's status never became final
     * while it was asked. The gateway's ledger or reconciliation decides; nothing is assumed charged.
     */
    event('gateway-charge-alert', {
      ...cycleRef,
      clientOrderId: z.string().min(1).max(128),
      gatewayOrderId: z.string().min(1).max(128).optional(),
      reason: z.enum(['not-found', 'unconfirmed']),
    }),
    /**
     * A gateway charge being confirmed settled by an audited decision of two people (a case), not
     * by a gateway answer: `done` — the cycle counts as charged at `amount` (the gateway's, with
     * `requestedAmount`, the schedule's, and `amountWhy` when they differ); `not-done` — the cycle
     * counts as not charged. Never a `gateway-cycle-charged`: finance tells evidence from decision.
     */
    chargeLifecycle.settledByDecision.extend(gatewayCharge),
    /**
     * A gateway answer about a charge settled by decision contradicts the decision: the case is
     * open again and a person must look; the decision's event stands (history is not rewritten).
     */
    chargeLifecycle.caseReopened.extend(gatewayCharge),
  ),
  internalCommands: ['record-cycle-outcome', 'schedule-charge-settle-by-decision'],
});

// ---- for consumers ------------------------------------------------------------------------------

export const SCHEDULE_COMMAND_SCHEMAS = SCHEDULE_FAMILY.commands;
/** The schedule events but `command-rejected` (listed with the card payments' events). */
export const SCHEDULE_EVENT_SCHEMAS = SCHEDULE_FAMILY.events;

export const ScheduleCommand = unionOf(SCHEDULE_COMMAND_SCHEMAS);
export type ScheduleCommand = z.infer<typeof ScheduleCommand>;

export const ScheduleCommandRejected = commandRejectedEvent('scheduleId', '');

export const ScheduleEvent = unionOf({
  ...SCHEDULE_EVENT_SCHEMAS,
  'command-rejected': ScheduleCommandRejected,
});
export type ScheduleEvent = z.infer<typeof ScheduleEvent>;

/**
 * Schedules and card references (parsed like every command, by `parseCommand`), kept out of
 * `PaymentCommand` on purpose (the card-payment decider switches exhaustively over that).
 */
export const RECURRING_COMMAND_SCHEMAS = {
  ...SCHEDULE_COMMAND_SCHEMAS,
  ...CARD_REFERENCE_COMMAND_SCHEMAS,
} as const;
export const RecurringCommand = unionOf(RECURRING_COMMAND_SCHEMAS);
export type RecurringCommand = z.infer<typeof RecurringCommand>;
