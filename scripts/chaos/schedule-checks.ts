/**
 * The verdict of the recurring-schedule phase (pure): each due cycle charged once by the ledger
 * and reported (or alerted) once on the event stream, from the phase's events and the sandbox's
 * ledger (the workload is `schedules.ts`).
 */
import type { Money, ScheduleEvent } from '@payments/contracts';
import type { LedgerEntry } from '../stack/sandbox-controls';
import { expectedMovements, type ObservedEvent, type Problem, type SagaEvent } from './checks';
import {
  cycleDueAt,
  DAY,
  type ObservedScheduleEvent,
  type SchedulePhase,
  type ScheduleSpec,
} from './schedule-plan';

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

/** A payment's final outcome events. */
export const FINAL_PAYMENT = new Set(['approved', 'declined', 'failed']);

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
      // A person is asked to look either by the not-found alert of an expected cycle or, for a
      // reported charge whose status never became final, by the shared unknown-outcome alert.
      const alerts = [
        ...ofCycle('gateway-charge-alert', cycle).map((a) => a.reason),
        ...ofCycle('gateway-charge-outcome-unknown', cycle)
          .filter((u) => u.alert === true)
          .map((u) => `outcome unknown${u.concern === undefined ? '' : ` (${u.concern})`}`),
      ];
      const reported =
        charged.length > 0
          ? ('charged' as const)
          : declined.length > 0
            ? ('declined' as const)
            : undefined;
      const alerted =
        alerts.length > 0
          ? `alert: ${alerts.join(', ')}`
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
