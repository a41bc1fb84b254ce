import type {
  CreateScheduleCommand,
  PaymentEvent,
  RecordCycleOutcomeCommand,
} from '@payments/contracts';
import { derivedUuid } from '../../domain';
import type { RuntimeEffect } from '../../runtime/flow';
import type { PaymentState } from './domain';

/**
 * A rebill a recurring schedule started reports its outcome back (issue #12): when the decision
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
  const command: RecordCycleOutcomeCommand = {
    type: 'record-cycle-outcome',
    commandId: derivedUuid(`${before.paymentId}/record-cycle-outcome`),
    scheduleId: before.schedule.scheduleId,
    merchant: before.merchant,
    occurredAt: now,
    cycle: before.schedule.cycle,
    attempt: before.schedule.attempt,
    paymentId: before.paymentId,
    outcome: after.status,
    ...(code === undefined ? {} : { code: code.slice(0, 64) }),
  };
  return [{ type: 'start-saga', command }];
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
