import { randomUUID } from 'node:crypto';
import type { CreateScheduleCommand, Money, ScheduleEvent } from '@payments/contracts';
import { PaymentStack, ReplicaName, SANDBOX_MERCHANT } from '../stack/payment-stack';
import { sleep } from '../stack/processes';
import type { FaultRule, LedgerEntry } from '../stack/sandbox-controls';
import { expectedMovements, type ObservedEvent, type Problem, type SagaEvent } from './checks';

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

/** Endpoints of the phase: its own schedules rebill on one, the other registers with the gateway. */
export const OWN_SCHEDULE_ENDPOINT = '1115';
export const GATEWAY_SCHEDULE_ENDPOINT = '1114';
/** How long after a registered cycle's time the orchestrator asks for its charge (its clock). */
export const GATEWAY_CHARGE_GRACE_SECONDS = 60;
const DAY = 86_400;
const DAY_MS = DAY * 1000;

/** What the orchestrator needs for the phase (added to the chaos run's orchestrator env). */
export function scheduleEnv(): Record<string, string> {
  return {
    // The clock control (POST /test-controls/clock/advance): cycles come due in seconds.
    TEST_CONTROLS_ENABLED: 'true',
    SCHEDULE_GATEWAY_REGISTRATION_ENDPOINTS: GATEWAY_SCHEDULE_ENDPOINT,
    SCHEDULE_GATEWAY_STATUS_POLL_SECONDS: '2',
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

// ---- the verdict (pure) -------------------------------------------------------------------------

export interface CycleVerdict {
  readonly scheduleId: string;
  readonly chargedBy: ScheduleSpec['chargedBy'];
  readonly cycle: number;
  readonly due: boolean;
  /** The ledger's charges of the cycle (every attempt's payment, or the gateway's order). */
  readonly ledger: readonly LedgerEntry[];
  /** How the event stream settled it: charged, declined (its last attempt), or not. */
  readonly reported?: 'charged' | 'declined';
  /** Why a person was asked to look (an alert), when one was. */
  readonly alerted?: string;
}

export interface ScheduleChecks {
  readonly schedules: number;
  readonly cycles: CycleVerdict[];
  /** A cycle the ledger charged more than once (several attempts, orders or charges). */
  readonly chargedTwice: Problem[];
  /** A cycle the ledger charged with no charge event and no alert about it. */
  readonly neverReported: Problem[];
  /**
   * A charge event the ledger does not show (or with another amount or order), a cycle reported
   * charged more than once, reported declined while the ledger charged it, or a rebill whose own
   * events disagree with the ledger.
   */
  readonly misreported: Problem[];
  /** A due cycle neither reported nor alerted, the ledger showing nothing. */
  readonly silent: Problem[];
  /** Registrations that failed or stayed unknown with the alert raised (nothing will be charged). */
  readonly registrationsFailed: Problem[];
  /** The phase's schedule events by type, once each (the faults at work show here). */
  readonly eventTypes: Record<string, number>;
}

function distinctEvents<E>(observed: readonly { event: E; ceId: string }[]): E[] {
  const seen = new Set<string>();
  return observed.filter((o) => !seen.has(o.ceId) && seen.add(o.ceId)).map((o) => o.event);
}

const FINAL_PAYMENT = new Set(['approved', 'declined', 'failed']);

/** A payment's pending operation raised for a person, and not settled since. */
function rebillAlert(events: readonly SagaEvent[]): string | undefined {
  let alert: string | undefined;
  for (const e of [...events].sort((a, b) => a.version - b.version)) {
    if (e.type === 'outcome-unknown' && 'alert' in e && e.alert)
      alert = ('concern' in e ? e.concern : undefined) ?? 'outcome unknown';
    else if (e.type === 'operation-resent' || FINAL_PAYMENT.has(e.type)) alert = undefined;
  }
  return alert;
}

const money = (m: Money | { minor: number; currency: string }) => `${m.minor} ${m.currency}`;

/**
 * Every cycle of every schedule judged against the ledger: a charge the ledger shows is reported
 * exactly once with the ledger's amount, no cycle is charged twice, nothing is reported that the
 * ledger does not show, and every due cycle is reported or alerted. `now` is the orchestrator's
 * clock (a registered cycle is due once its grace has passed on it).
 */
export function checkSchedules(input: {
  readonly specs: readonly ScheduleSpec[];
  readonly scheduleEvents: readonly ObservedScheduleEvent[];
  /** Payment events (the rebills of the orchestrator's own schedules among them). */
  readonly paymentEvents: readonly ObservedEvent[];
  readonly ledger: readonly LedgerEntry[];
  readonly now: number;
  readonly graceMs: number;
}): ScheduleChecks {
  const bySchedule = new Map<string, ObservedScheduleEvent[]>();
  for (const o of input.scheduleEvents)
    bySchedule.set(o.event.scheduleId, [...(bySchedule.get(o.event.scheduleId) ?? []), o]);
  const byPayment = new Map<string, ObservedEvent[]>();
  for (const o of input.paymentEvents) {
    if (!('paymentId' in o.event)) continue;
    byPayment.set(o.event.paymentId, [...(byPayment.get(o.event.paymentId) ?? []), o]);
  }
  const charges = new Map<string, LedgerEntry[]>();
  for (const l of input.ledger) {
    if (l.movement !== 'charged') continue;
    charges.set(l.clientOrderId, [...(charges.get(l.clientOrderId) ?? []), l]);
  }
  const cycles: CycleVerdict[] = [];
  const chargedTwice: Problem[] = [];
  const neverReported: Problem[] = [];
  const misreported: Problem[] = [];
  const silent: Problem[] = [];
  const registrationsFailed: Problem[] = [];
  const eventTypes: Record<string, number> = {};
  const specIds = new Set(input.specs.map((s) => s.scheduleId));
  for (const e of distinctEvents(input.scheduleEvents))
    if (specIds.has(e.scheduleId)) eventTypes[e.type] = (eventTypes[e.type] ?? 0) + 1;

  for (const spec of input.specs) {
    const id = spec.scheduleId;
    const events = distinctEvents(bySchedule.get(id) ?? []);
    const observed = bySchedule.get(id) ?? [];
    const at = (cycle: number) => ({ paymentId: `${id} cycle ${cycle}` });
    const ofCycle = <T extends ScheduleEvent['type']>(type: T, cycle: number) =>
      events.filter(
        (e): e is Extract<ScheduleEvent, { type: T }> =>
          e.type === type && 'cycle' in e && e.cycle === cycle,
      );
    // Reported more than once: distinct ce_ids of a charge event of the same cycle.
    const chargeEvents = (cycle: number) =>
      new Set(
        observed
          .filter(
            (o) =>
              (o.event.type === 'cycle-charged' || o.event.type === 'gateway-cycle-charged') &&
              o.event.cycle === cycle,
          )
          .map((o) => o.ceId),
      ).size;

    if (spec.chargedBy === 'orchestrator') {
      const requested = events.filter(
        (e): e is Extract<ScheduleEvent, { type: 'cycle-charge-requested' }> =>
          e.type === 'cycle-charge-requested',
      );
      const known = new Set([
        ...Array.from({ length: spec.cycles }, (_, i) => i),
        ...requested.map((r) => r.cycle),
      ]);
      let heldBehind: number | undefined;
      for (const cycle of [...known].sort((a, b) => a - b)) {
        const attempts = requested.filter((r) => r.cycle === cycle);
        const ledger = attempts.flatMap((r) => charges.get(r.paymentId) ?? []);
        const charged = ofCycle('cycle-charged', cycle);
        const declined = ofCycle('cycle-charge-declined', cycle);
        const lastAttempt = Math.max(0, ...attempts.map((r) => r.attempt));
        const reported =
          charged.length > 0
            ? ('charged' as const)
            : declined.some((d) => d.attempt === lastAttempt) && lastAttempt > 0
              ? ('declined' as const)
              : undefined;
        let alerted: string | undefined;
        for (const r of attempts) {
          const why = rebillAlert(distinctEvents(byPayment.get(r.paymentId) ?? []));
          if (why !== undefined) alerted = `rebill ${r.paymentId} (attempt ${r.attempt}): ${why}`;
        }
        if (alerted === undefined && attempts.length === 0 && heldBehind !== undefined)
          alerted = `held behind cycle ${heldBehind}, whose rebill is raised for a person`;
        if (alerted !== undefined && reported === undefined) heldBehind ??= cycle;
        const due = cycle < spec.cycles && cycleDueAt(spec, cycle) <= input.now;
        cycles.push({
          scheduleId: id,
          chargedBy: spec.chargedBy,
          cycle,
          due,
          ledger,
          ...(reported === undefined ? {} : { reported }),
          ...(alerted === undefined ? {} : { alerted }),
        });

        if (ledger.length > 1)
          chargedTwice.push({
            ...at(cycle),
            detail: `${ledger.length} charges in the ledger (${ledger.map((l) => `${l.clientOrderId} ${l.amountMinor}`).join(', ')})`,
          });
        if (chargeEvents(cycle) > 1)
          misreported.push({
            ...at(cycle),
            detail: `reported charged ${chargeEvents(cycle)} times`,
          });
        for (const c of charged) {
          const moved = charges.get(c.paymentId) ?? [];
          if (moved.length === 0)
            misreported.push({
              ...at(cycle),
              detail: `reported charged ${money(c.amount)} (rebill ${c.paymentId}), the ledger shows no charge of it`,
            });
          else if (
            moved.some((l) => l.amountMinor !== c.amount.minor || l.currency !== c.amount.currency)
          )
            misreported.push({
              ...at(cycle),
              detail: `reported charged ${money(c.amount)}, the ledger charged ${moved.map((l) => `${l.amountMinor} ${l.currency}`).join(', ')}`,
            });
        }
        for (const d of declined) {
          if ((charges.get(d.paymentId) ?? []).length > 0)
            misreported.push({
              ...at(cycle),
              detail: `attempt ${d.attempt} reported ${d.outcome}, the ledger charged rebill ${d.paymentId}`,
            });
        }
        if (ledger.length > 0 && charged.length === 0 && alerted === undefined)
          neverReported.push({
            ...at(cycle),
            detail: `the ledger charged ${ledger.map((l) => `${l.amountMinor} ${l.currency} (${l.clientOrderId})`).join(', ')}; no cycle-charged, no alert`,
          });
        if (due && reported === undefined && alerted === undefined && ledger.length === 0)
          silent.push({
            ...at(cycle),
            detail: `due ${new Date(cycleDueAt(spec, cycle)).toISOString()}, ${attempts.length} attempt(s) requested; neither reported nor alerted`,
          });
        // The rebill payments' own events against the ledger (each a card payment of its own).
        for (const r of attempts) {
          const rebill = distinctEvents(byPayment.get(r.paymentId) ?? []);
          if (!rebill.some((e) => FINAL_PAYMENT.has(e.type))) continue;
          const expected = expectedMovements(rebill);
          const actual = input.ledger
            .filter((l) => l.clientOrderId === r.paymentId)
            .map((l) => `${l.movement} ${l.amountMinor}`)
            .sort();
          if (expected.join('|') !== actual.join('|'))
            misreported.push({
              ...at(cycle),
              detail: `rebill ${r.paymentId}: events say [${expected.join(', ')}], ledger has [${actual.join(', ')}]`,
            });
        }
      }
      continue;
    }

    // Registered with the gateway: its charge of cycle n is `<schedule id>-<n − first + 1>`.
    const created = events.find((e) => e.type === 'schedule-created');
    const first = created?.type === 'schedule-created' ? created.skippedCycles : 0;
    const failed = events.find((e) => e.type === 'schedule-registration-failed');
    const stuck = events.find((e) => e.type === 'schedule-registration-unknown' && e.alert);
    const registered = events.some((e) => e.type === 'schedule-registered');
    if (failed?.type === 'schedule-registration-failed' && !registered)
      registrationsFailed.push({
        paymentId: id,
        detail: `registration failed (${failed.reason}): ${failed.message}`,
      });
    else if (stuck !== undefined && !registered)
      registrationsFailed.push({ paymentId: id, detail: 'registration unknown, alert raised' });
    const prefix = `${id}-`;
    const cycleOf = (clientOrderId: string) => {
      const n = clientOrderId.slice(prefix.length);
      return /^[1-9]\d*$/.test(n) ? first + Number(n) - 1 : undefined;
    };
    const known = new Set(Array.from({ length: spec.cycles }, (_, i) => first + i));
    for (const key of charges.keys()) {
      const cycle = key.startsWith(prefix) ? cycleOf(key) : undefined;
      if (cycle !== undefined) known.add(cycle);
    }
    for (const e of events) if ('cycle' in e) known.add(e.cycle);
    for (const cycle of [...known].sort((a, b) => a - b)) {
      const clientOrderId = `${id}-${cycle - first + 1}`;
      const ledger = charges.get(clientOrderId) ?? [];
      const charged = ofCycle('gateway-cycle-charged', cycle);
      const declined = ofCycle('gateway-cycle-declined', cycle);
      const alerts = ofCycle('gateway-charge-alert', cycle);
      const reported =
        charged.length > 0
          ? ('charged' as const)
          : declined.length > 0
            ? ('declined' as const)
            : undefined;
      const alerted =
        alerts.length > 0
          ? `gateway-charge-alert (${alerts.map((a) => a.reason).join(', ')})`
          : !registered && (failed !== undefined || stuck !== undefined)
            ? 'the registration failed or is raised for a person'
            : undefined;
      const due =
        registered &&
        cycle - first < spec.cycles &&
        cycleDueAt(spec, cycle) + input.graceMs <= input.now;
      cycles.push({
        scheduleId: id,
        chargedBy: spec.chargedBy,
        cycle,
        due,
        ledger,
        ...(reported === undefined ? {} : { reported }),
        ...(alerted === undefined ? {} : { alerted }),
      });

      if (ledger.length > 1)
        chargedTwice.push({
          ...at(cycle),
          detail: `${ledger.length} charges of ${clientOrderId} in the ledger (orders ${ledger.map((l) => l.orderId).join(', ')})`,
        });
      if (chargeEvents(cycle) > 1)
        misreported.push({ ...at(cycle), detail: `reported charged ${chargeEvents(cycle)} times` });
      for (const c of charged) {
        const moved = ledger.filter((l) => l.orderId === c.gatewayOrderId);
        if (moved.length === 0 || c.clientOrderId !== clientOrderId)
          misreported.push({
            ...at(cycle),
            detail: `reported charged ${money(c.amount)} on order ${c.gatewayOrderId} (${c.clientOrderId}), the ledger shows no charge of that order for ${clientOrderId}`,
          });
        else if (
          moved.some((l) => l.amountMinor !== c.amount.minor || l.currency !== c.amount.currency)
        )
          misreported.push({
            ...at(cycle),
            detail: `reported charged ${money(c.amount)}, the ledger charged ${moved.map((l) => `${l.amountMinor} ${l.currency}`).join(', ')}`,
          });
      }
      for (const d of declined) {
        if (ledger.some((l) => l.orderId === d.gatewayOrderId))
          misreported.push({
            ...at(cycle),
            detail: `reported ${d.outcome} (order ${d.gatewayOrderId}), the ledger charged it`,
          });
      }
      if (ledger.length > 0 && charged.length === 0 && alerted === undefined)
        neverReported.push({
          ...at(cycle),
          detail: `the ledger charged ${ledger.map((l) => `${l.amountMinor} ${l.currency} (order ${l.orderId})`).join(', ')}; no gateway-cycle-charged, no alert`,
        });
      if (due && reported === undefined && alerted === undefined && ledger.length === 0)
        silent.push({
          ...at(cycle),
          detail: `due ${new Date(cycleDueAt(spec, cycle)).toISOString()} (+ grace); neither reported nor alerted`,
        });
    }
  }
  return {
    schedules: input.specs.length,
    cycles,
    chargedTwice,
    neverReported,
    misreported,
    silent,
    registrationsFailed,
    eventTypes,
  };
}

/** The phase's zero lines (in the chaos report's zeroLines and passed). */
export function scheduleZeroLines(checks: ScheduleChecks): Record<string, number> {
  return {
    'schedule cycles charged twice': checks.chargedTwice.length,
    'schedule charges never reported': checks.neverReported.length,
    'schedule cycles misreported': checks.misreported.length,
    'schedule cycles due, neither reported nor alerted': checks.silent.length,
  };
}

export function formatSchedules(phase: SchedulePhase, checks: ScheduleChecks): string[] {
  const lines: string[] = [];
  const count = (by: ScheduleSpec['chargedBy'], f: (c: CycleVerdict) => boolean) =>
    checks.cycles.filter((c) => c.chargedBy === by && f(c)).length;
  lines.push(
    `  schedules: ${phase.specs.length} (${phase.specs.filter((s) => s.chargedBy === 'orchestrator').length} own, ${phase.specs.filter((s) => s.chargedBy === 'gateway').length} registered with the gateway), ${phase.steps.length} clock steps (${phase.steps.map((s) => `${(s.advancedSeconds / DAY).toFixed(2)} d${s.settledMs === undefined ? ' not settled' : ` settled in ${(s.settledMs / 1000).toFixed(0)} s`}`).join(', ')}), ${phase.seconds.toFixed(0)} s`,
  );
  for (const by of ['orchestrator', 'gateway'] as const) {
    lines.push(
      `    charged by ${by.padEnd(12)} cycles due ${count(by, (c) => c.due)}, charged in the ledger ${count(by, (c) => c.ledger.length > 0)}, reported charged ${count(by, (c) => c.reported === 'charged')}, declined ${count(by, (c) => c.reported === 'declined')}, alerted ${count(by, (c) => c.alerted !== undefined)}`,
    );
  }
  lines.push(
    `    schedule events: ${Object.entries(checks.eventTypes)
      .map(([type, n]) => `${type} ${n}`)
      .join(', ')}`,
  );
  for (const a of phase.actions)
    lines.push(
      `    after step ${a.step}: ${a.signal} ${a.target}, back in ${(a.recoveryMs / 1000).toFixed(1)} s`,
    );
  const show = (title: string, items: readonly Problem[]) => {
    for (const p of items.slice(0, 10)) lines.push(`    ${title} ${p.paymentId}: ${p.detail}`);
    if (items.length > 10) lines.push(`    … ${items.length - 10} more`);
  };
  show('registration', checks.registrationsFailed);
  show(
    'alerted',
    checks.cycles
      .filter((c) => c.alerted !== undefined)
      .map((c) => ({ paymentId: `${c.scheduleId} cycle ${c.cycle}`, detail: c.alerted ?? '' })),
  );
  show('charged twice', checks.chargedTwice);
  show('never reported', checks.neverReported);
  show('misreported', checks.misreported);
  show('silent', checks.silent);
  return lines;
}

// ---- the workload -------------------------------------------------------------------------------

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
