import type {
  CardReferenceCommand,
  CreateScheduleCommand,
  MerchantRef,
  PaymentCommand,
  PaymentEvent,
  RecordCycleOutcomeCommand,
} from '@payments/contracts';
import { derivedUuid } from '../../domain';
import type { Rejection } from '../../domain/decision';
import type { RuntimeEffect } from '../../runtime/flow';
import type { PaymentState } from './domain';
import type { ScheduleLink } from './domain/state';

/**
 * A rebill a recurring schedule started reports its outcome back: when the decision
 * settles the rebill (approved, declined or failed, each on a gateway answer or a stated
 * not-sent rule), the schedule gets the internal `record-cycle-outcome` as a `start-saga` in the
 * same transaction. Its command id is derived from the payment id, so a decision taken again
 * after a rollback or a redelivery starts the same command and the runtime records it once: one
 * report per rebill, hence one per cycle attempt.
 */
export function cycleOutcomeEffects(
  before: PaymentState,
  after: PaymentState,
  events: readonly PaymentEvent[],
  now: string,
): RuntimeEffect[] {
  if (before.status === 'initial' || before.inFlight === undefined) return [];
  if (before.kind !== 'rebill' || before.schedule === undefined) return [];
  if (before.inFlight.operation !== 'rebill') return [];
  if (after.status !== 'approved' && after.status !== 'declined' && after.status !== 'failed')
    return [];
  const last = events.find((e) => e.type === 'declined' || e.type === 'failed');
  const code = last?.code ?? (last?.type === 'failed' ? last.reason : undefined);
  return [
    { type: 'start-saga', command: cycleOutcome(before, before.schedule, after.status, code, now) },
  ];
}

/**
 * A schedule's rebill refused before it became a payment (above the endpoint's maximum, a
 * currency it refuses …) has no saga that could ever report its cycle: the refusal is the cycle's
 * outcome, `failed` with the refusal's code, reported like a settled rebill's (same derived command
 * id), so the schedule leaves its charge and follows its dunning rules. A rebill refused because
 * its payment already exists reports nothing: that payment reports for itself.
 */
export function refusedRebillEffects(
  command: PaymentCommand | CardReferenceCommand,
  rejection: Rejection,
  now: string,
): RuntimeEffect[] {
  if (command.type !== 'rebill' || command.schedule === undefined) return [];
  if (rejection.code === 'PAYMENT_ALREADY_EXISTS') return [];
  return [
    {
      type: 'start-saga',
      command: cycleOutcome(command, command.schedule, 'failed', rejection.code, now),
    },
  ];
}

function cycleOutcome(
  rebill: { paymentId: string; merchant: MerchantRef },
  schedule: ScheduleLink,
  outcome: RecordCycleOutcomeCommand['outcome'],
  code: string | undefined,
  now: string,
): RecordCycleOutcomeCommand {
  return {
    type: 'record-cycle-outcome',
    commandId: derivedUuid(`${rebill.paymentId}/record-cycle-outcome`),
    scheduleId: schedule.scheduleId,
    merchant: rebill.merchant,
    occurredAt: now,
    cycle: schedule.cycle,
    attempt: schedule.attempt,
    paymentId: rebill.paymentId,
    outcome,
    ...(code === undefined ? {} : { code: code.slice(0, 64) }),
  };
}

/**
 * A create-card-ref that named a schedule starts it once the reference exists: `create-schedule`
 * on the new reference as a `start-saga` in the same transaction as `card-ref-created`, with a
 * command id derived from (payment, schedule), so it is started once. Refusals of the schedule
 * (e.g. INVALID_SCHEDULE) are the schedule's own command-rejected.
 */
export function scheduleStartEffects(
  before: PaymentState,
  events: readonly PaymentEvent[],
  now: string,
): RuntimeEffect[] {
  if (before.status === 'initial') return [];
  return events.flatMap((event): RuntimeEffect[] => {
    if (event.type !== 'card-ref-created' || event.schedule === undefined) return [];
    const { scheduleId, amount, description, rule } = event.schedule;
    const command: CreateScheduleCommand = {
      type: 'create-schedule',
      commandId: derivedUuid(`${before.paymentId}/create-schedule/${scheduleId}`),
      scheduleId,
      merchant: before.merchant,
      occurredAt: now,
      cardRef: event.cardRef,
      amount,
      description,
      rule,
    };
    return [{ type: 'start-saga', command }];
  });
}
