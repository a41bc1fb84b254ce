import { randomUUID } from 'node:crypto';
import type { CreateScheduleCommand, ScheduleEvent } from '@payments/contracts';
import { PaymentStack, SANDBOX_MERCHANT } from '../stack/payment-stack';
import { sleep } from '../stack/processes';
import type { FaultRule } from '../stack/sandbox-controls';
import { checkSchedules, type CycleVerdict, FINAL_PAYMENT } from './schedule-checks';
import {
  DAY,
  GATEWAY_CHARGE_GRACE_SECONDS,
  GATEWAY_SCHEDULE_ENDPOINT,
  OWN_SCHEDULE_ENDPOINT,
  type ScheduleActionRecord,
  type SchedulePhase,
  type ScheduleSpec,
  type ScheduleWorkload,
} from './schedule-plan';

/**
 * Recurring schedules in the chaos run: schedules the orchestrator charges itself (its saga starts
 * a rebill per cycle on its own clock) and schedules registered with the gateway (the gateway
 * charges each cycle on its clock; the orchestrator learns of it by callbacks and status queries),
 * with both clocks moved forward so several daily cycles fall due during the run, while replicas
 * are killed and the sandbox injects its faults. The workload (`runSchedulePhase`) runs on the
 * chaos run's stack; the verdict (`checkSchedules`) is pure, from the event stream and the
 * sandbox's ledger.
 *
 * Why a phase after the main workload's quiescence, not clocks moved during it: moving the
 * orchestrator's clock moves every timer it has — a two-step payout's approval window expires at
 * once, no-trace and never-received windows close, hold expiries fire, the daily payout budget
 * rolls to another day — and moving the sandbox's clock settles sales (a void becomes a refusal)
 * and expires payout checks. Moved mid-workload, the main scenarios would end otherwise than
 * planned and its checks would judge the clock, not the service. After quiescence nothing of the
 * main workload is waiting on a timer that matters, and the phase still runs on the same stack,
 * with the same percentage faults (money operations, status queries, callbacks), kills of its
 * own and faults aimed at the schedules. The two clocks move in step, the gateway's first: it
 * charges a cycle at the cycle's date, and the orchestrator asks for the charge of a registered
 * schedule when the cycle's time and its grace have passed on its own clock.
 */

export interface SchedulePhaseContext {
  readonly stack: PaymentStack;
  /** Seeded ids and draws (the run's generator): same seed, same schedules. */
  readonly newId: () => string;
  readonly random: () => number;
  /** The run's percentage faults: re-added after the phase's aimed ones, which must hit first. */
  readonly faults: readonly FaultRule[];
  readonly log: (line: string) => void;
}

const base = (endpointId: string) => ({
  commandId: randomUUID(),
  merchant: { endpointId },
  occurredAt: new Date().toISOString(),
});

/** An approved sale and a card reference taken from it, asked again if the faults defeat one. */
async function cardReference(ctx: SchedulePhaseContext): Promise<string> {
  const { stack } = ctx;
  for (let attempt = 1; attempt <= 4; attempt++) {
    const sale = stack.sale({ paymentId: ctx.newId(), cvv: '123', amountMinor: 1_000 });
    await stack.send(sale);
    const done = await stack.events
      .waitFor(
        sale.paymentId,
        (e) =>
          FINAL_PAYMENT.has(e.type) || (e.type === 'outcome-unknown' && 'alert' in e && !!e.alert),
        120_000,
      )
      .catch(() => undefined);
    if (done?.event.type !== 'approved') {
      ctx.log(`schedules: card-reference sale ${sale.paymentId} ${done?.event.type ?? 'silent'}`);
      continue;
    }
    await stack.sendRaw({
      type: 'create-card-ref',
      ...base(SANDBOX_MERCHANT.plainEndpoint),
      paymentId: sale.paymentId,
    });
    const created = await stack.events
      .waitFor(
        sale.paymentId,
        (e) =>
          e.type === 'card-ref-created' ||
          e.type === 'card-reference-failed' ||
          (e.type === 'card-reference-unknown' && 'alert' in e && !!e.alert),
        120_000,
      )
      .catch(() => undefined);
    if (created?.event.type === 'card-ref-created') return created.event.cardRef.refId;
    ctx.log(`schedules: create-card-ref of ${sale.paymentId} ${created?.event.type ?? 'silent'}`);
  }
  throw new Error('schedules: no card reference after 4 attempts');
}

/** Has every due cycle of the schedule been reported or alerted (on the live stream)? */
function settled(
  stack: PaymentStack,
  spec: ScheduleSpec,
  orchestratorNow: number,
): { settled: boolean; verdicts: CycleVerdict[] } {
  const scheduleEvents = stack.events
    .scheduleEventsOf(spec.scheduleId)
    .map((event, i) => ({ event, ceId: `live-${i}` }));
  const paymentIds = scheduleEvents.flatMap((o) =>
    o.event.type === 'cycle-charge-requested' ? [o.event.paymentId] : [],
  );
  const paymentEvents = paymentIds.flatMap((id) =>
    stack.events.eventsOf(id).map((r) => ({ event: r.event, ceId: r.ceId })),
  );
  const checks = checkSchedules({
    specs: [spec],
    scheduleEvents,
    paymentEvents,
    ledger: [],
    now: orchestratorNow,
    graceMs: GATEWAY_CHARGE_GRACE_SECONDS * 1000,
  });
  const open = checks.cycles.filter(
    (c) => c.due && c.reported === undefined && c.alerted === undefined,
  );
  return { settled: open.length === 0, verdicts: checks.cycles };
}

/**
 * The clock steps: the first a day and an hour (cycle 0, dated tomorrow at 00:00 UTC, is due
 * whatever the time of day now), one of two days (two cycles fall due at once), then a day at a
 * time until every cycle is due, and one more day (dunning retries, the last cycle's grace).
 */
export function clockSteps(cycles: number): number[] {
  const steps = [DAY + 3_600];
  let covered = 1;
  while (covered < cycles) {
    const days = covered === 2 && cycles - covered >= 2 ? 2 : 1;
    steps.push(days * DAY);
    covered += days;
  }
  steps.push(DAY);
  return steps;
}

export async function runSchedulePhase(
  ctx: SchedulePhaseContext,
  workload: ScheduleWorkload,
): Promise<SchedulePhase> {
  const { stack, log } = ctx;
  const started = Date.now();
  if (workload.cycles < 3) throw new Error('schedules: at least 3 cycles (faults aim at 1 and 2)');
  log(`schedules: ${workload.own} own, ${workload.gateway} registered, ${workload.cycles} cycles`);
  const refId = await cardReference(ctx);
  // Tomorrow on the orchestrator's clock (00:00 UTC): nothing is due before the clocks move.
  const startDate = new Date(Date.now() + (stack.orchestratorClockAdvanced + DAY) * 1000)
    .toISOString()
    .slice(0, 10);
  const specs: ScheduleSpec[] = [];
  for (let i = 0; i < workload.own + workload.gateway; i++) {
    const gateway = i >= workload.own;
    specs.push({
      scheduleId: ctx.newId(),
      chargedBy: gateway ? 'gateway' : 'orchestrator',
      endpointId: gateway ? GATEWAY_SCHEDULE_ENDPOINT : OWN_SCHEDULE_ENDPOINT,
      amount: { minor: 100 + Math.floor(ctx.random() * 9_900), currency: 'USD' },
      startDate,
      cycles: workload.cycles,
    });
  }

  const create = (spec: ScheduleSpec): CreateScheduleCommand => ({
    type: 'create-schedule',
    ...base(spec.endpointId),
    scheduleId: spec.scheduleId,
    cardRef: { refId },
    amount: spec.amount,
    description: `Chaos plan ${spec.chargedBy}`,
    rule: {
      period: 'day',
      interval: 1,
      startDate: spec.startDate,
      timeOfDay: '00:00',
      timeZone: 'UTC',
      end: { kind: 'count', count: spec.cycles },
    },
  });
  await stack.sendRaw(...specs.map(create));
  const registered: string[] = [];
  for (const spec of specs) {
    const wanted =
      spec.chargedBy === 'gateway'
        ? (e: ScheduleEvent) =>
            e.type === 'schedule-registered' ||
            e.type === 'schedule-registration-failed' ||
            (e.type === 'schedule-registration-unknown' && e.alert === true)
        : (e: ScheduleEvent) => e.type === 'schedule-created' || e.type === 'command-rejected';
    const e = await stack.events
      .waitForSchedule(spec.scheduleId, wanted, 120_000)
      .catch(() => undefined);
    log(`schedules: ${spec.chargedBy} ${spec.scheduleId} ${e?.type ?? 'nothing within 120 s'}`);
    if (e?.type === 'schedule-registered') registered.push(spec.scheduleId);
  }
  // Faults aimed at the registered schedules' charges (a registration may fail for good under
  // the percentage faults: no trace of it twice), added before the gateway's clock reaches them
  // and before the run's percentage rules (the first rule that hits applies): every callback of
  // the first one's cycle-1 charge is dropped (only its expected-charge status query finds it),
  // the second's cycle-1 status queries fail thrice, the third's (or the last's) cycle-2 charge
  // loses its callbacks and its first two status queries.
  await stack.controls.clearFaults();
  const [g0, g1] = registered;
  const g2 = registered[2] ?? registered.at(-1);
  if (g0) await stack.controls.addFault({ clientOrderId: `${g0}-2`, callbacks: 'drop' });
  if (g1)
    await stack.controls.addFault({
      clientOrderId: `${g1}-2`,
      operation: 'STATUS',
      failBefore: 503,
      times: 3,
    });
  if (g2) {
    await stack.controls.addFault({ clientOrderId: `${g2}-3`, callbacks: 'drop' });
    await stack.controls.addFault({
      clientOrderId: `${g2}-3`,
      operation: 'STATUS',
      failBefore: 503,
      times: 2,
    });
  }
  for (const rule of ctx.faults) await stack.controls.addFault(rule);

  const steps: SchedulePhase['steps'] = [];
  const actions: ScheduleActionRecord[] = [];
  for (const [step, seconds] of clockSteps(workload.cycles).entries()) {
    // Aimed at the own schedules' rebills (endpoint-wide, the first that hits): cycle 1's first
    // is declined (dunning retries it a day later), cycle 2's first loses its reply after the
    // gateway charged it (outcome unknown, resolved by status queries).
    if (step === 1)
      await stack.controls.addFault({
        endpoint: OWN_SCHEDULE_ENDPOINT,
        operation: 'REBILL',
        outcome: 'declined',
        times: 1,
      });
    if (step === 2)
      await stack.controls.addFault({
        endpoint: OWN_SCHEDULE_ENDPOINT,
        operation: 'REBILL',
        failAfter: 'drop',
        times: 1,
      });
    // The gateway's clock first: it charges a registered cycle on its date, before the
    // orchestrator's clock reaches the cycle's time and grace and asks for the charge.
    await stack.controls.advanceClock(seconds);
    await stack.advanceOrchestratorClock(seconds);
    const stepStarted = Date.now();
    log(`schedules: step ${step}, both clocks +${(seconds / DAY).toFixed(2)} d`);
    const action = workload.actions[step];
    if (action !== undefined) {
      const at = Date.now();
      log(`schedules: ${action.signal} ${action.target}`);
      await stack.kill(action.target, action.signal);
      await stack.startAgain(action.target);
      actions.push({ ...action, step, recoveryMs: Date.now() - at });
    }
    let settledMs: number | undefined;
    const deadline = stepStarted + workload.stepTimeoutSeconds * 1000;
    for (;;) {
      const now = Date.now() + stack.orchestratorClockAdvanced * 1000;
      if (specs.every((s) => settled(stack, s, now).settled)) {
        settledMs = Date.now() - stepStarted;
        break;
      }
      if (Date.now() > deadline) {
        const open = specs.flatMap((s) =>
          settled(stack, s, now)
            .verdicts.filter((c) => c.due && c.reported === undefined && c.alerted === undefined)
            .map((c) => `${s.chargedBy} ${s.scheduleId} cycle ${c.cycle}`),
        );
        log(
          `schedules: step ${step} not settled in ${workload.stepTimeoutSeconds} s: ${open.join(', ')}`,
        );
        break;
      }
      await sleep(1_000);
    }
    steps.push({ advancedSeconds: seconds, ...(settledMs === undefined ? {} : { settledMs }) });
  }
  return {
    specs,
    steps,
    actions,
    advancedSeconds: stack.orchestratorClockAdvanced,
    seconds: (Date.now() - started) / 1000,
  };
}
