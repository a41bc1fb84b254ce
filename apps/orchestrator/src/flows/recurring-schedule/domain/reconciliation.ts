/**
 * What reconciliation expects of a schedule registered with the gateway beyond the charges it
 * recorded: the charges it waits for. The gateway charges every cycle on an order of its own
 * (`<schedule id>-<n>`); a cycle whose time (and the grace for the gateway's own time of day) has
 * passed and whose charge the schedule has not seen — its callbacks lost, its search alerted
 * `not-found` — is asked for by that client order id. Its outcome is unknown to the schedule, so
 * the gateway's final answer is evidence: handed to the schedule as the answer to its own search
 * of that cycle (the same subject), which records it as it records any charge found.
 */
import { addMs } from '../../../domain/decision';
import type {
  PlannedCheck,
  CheckTime,
  RunScope,
} from '../../../domain/reconciliation/reconciliation';
import { cycleDueAt, firstCycleFrom } from './calendar';
import { chargeClientOrderId, expectedChargeSubjectId } from './gateway-charged-model';
import { DEFAULT_EXPECTED_CHARGE_GRACE_MS, type ScheduleState } from './state';

/** Expected charges one run checks of one schedule at most (a long window over a daily one). */
export const MAX_EXPECTED_CHARGES_PER_RUN = 100;

/** The schedule statuses whose sagas a run looks at even when nothing of theirs changed. */
export const AWAITING_STATUSES: readonly string[] = ['registered'];

/**
 * The run's checks of a registered schedule's expected charges: each cycle whose charge is not
 * recorded and has been expected for the alert age — its time, the grace and the alert age have
 * passed (younger ones are the schedule's own search's business) — by the run whose window holds
 * that instant (so a scheduled run, made a settle time after its window, finds it due).
 */
export function expectedChargeChecks(
  state: ScheduleState,
  at: CheckTime,
  scope: RunScope,
  graceMs: number = DEFAULT_EXPECTED_CHARGE_GRACE_MS,
): PlannedCheck[] {
  if (state.status !== 'registered') return [];
  const { rule, scheduleId, amount } = state.terms;
  const first = state.firstCycle ?? 0;
  const seen = new Set(state.charges.map((c) => c.cycle));
  // A cycle is checked once expected for the alert age: at its time + the grace + the age.
  const lag = graceMs + at.unknownAlertMs;
  const until = Math.min(scope.to.getTime(), at.now.getTime() + 1);
  const checks: PlannedCheck[] = [];
  const start = firstCycleFrom(rule, first, new Date(scope.from.getTime() - lag).toISOString());
  if (start === undefined) return checks;
  for (let cycle = start; checks.length < MAX_EXPECTED_CHARGES_PER_RUN; cycle += 1) {
    const due = cycleDueAt(rule, cycle);
    if (due === undefined || Date.parse(due) + lag >= until) break;
    if (seen.has(cycle)) continue;
    checks.push({
      subject: `charge:expected-${cycle}`,
      expectation: {
        status: state.status,
        operation: 'sale',
        outcome: 'unknown',
        basis: 'latest-operation',
        requestId: expectedChargeSubjectId(scheduleId, cycle),
        amount,
        clientOrderId: chargeClientOrderId(scheduleId, cycle, first),
        unknownSince: addMs(due, graceMs),
      },
    });
  }
  return checks;
}
