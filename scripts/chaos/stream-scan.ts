/**
 * The chaos run's reading of every `payments.*` topic at the end: the events of the run's sagas
 * (parsed by the contracts' families, `parseStreamEvent`) with their broker time, the schedules'
 * events, what could not be read, the dead letters (those of the injected database outage apart)
 * and each broker action's first event after it.
 */
import type { Kafka } from 'kafkajs';
import {
  PAYOUT_BUDGET_FAMILY,
  SCHEDULE_FAMILY,
  type ScheduleEvent,
  TOPICS,
} from '@payments/contracts';
import { CONTROL_EVENTS, listTopics, parseStreamEvent, scanTopics } from '../stack/kafka-io';
import { type ActionRecord, isBrokerTarget } from './chaos-config';
import type { ObservedEvent } from './checks';
import type { ObservedScheduleEvent } from './schedule-plan';
import type { TimedEvent } from './time-to-truth';

/** How long after an outage the handlers' retries (libs/kafka, 5 retries ≈ 6.2 s) may still end. */
const OUTAGE_RETRIES_MS = 15_000;

export interface StreamScan {
  readonly events: ObservedEvent[];
  readonly scheduleEvents: ObservedScheduleEvent[];
  /** `<partition>/<offset>: <why>` of each event-topic message no family's schema accepts. */
  readonly unreadable: string[];
  readonly timedBySaga: Map<string, TimedEvent[]>;
  /** Event type → the name of its family in FLOW_FAMILIES. */
  readonly familyOfType: Record<string, string>;
  readonly dlq: Record<string, number>;
  readonly outageDlq: Record<string, number>;
}

/** Reads every topic; sets each broker action's `recoveryMs` (signal → first event after it). */
export async function scanStream(
  kafka: Kafka,
  actions: ActionRecord[],
  outage: { readonly from: number; readonly to: number },
): Promise<StreamScan> {
  const scan: StreamScan = {
    events: [],
    scheduleEvents: [],
    unreadable: [],
    timedBySaga: new Map(),
    familyOfType: {},
    dlq: {},
    outageDlq: {},
  };
  const firstAfter = new Map<number, number>();
  const topics = await listTopics(kafka, 'payments.');
  await scanTopics(kafka, topics, (m) => {
    if (m.topic.endsWith('.dlq')) {
      // The handler's retries outlast the outage: its dead letters come a little later.
      const ofOutage =
        outage.to > 0 && m.timestamp >= outage.from && m.timestamp <= outage.to + OUTAGE_RETRIES_MS;
      const table = ofOutage ? scan.outageDlq : scan.dlq;
      table[m.topic] = (table[m.topic] ?? 0) + 1;
    }
    actions.forEach((a, i) => {
      if (isBrokerTarget(a.target) && m.topic === TOPICS.events && m.timestamp >= a.backAt) {
        firstAfter.set(i, Math.min(firstAfter.get(i) ?? Infinity, m.timestamp));
      }
    });
    if (m.topic !== TOPICS.events) return;
    const ceId = m.headers.ce_id;
    let value: unknown;
    try {
      value = JSON.parse(m.value?.toString('utf8') ?? 'null');
    } catch {
      value = undefined;
    }
    const parsed = parseStreamEvent(value);
    if (!parsed.ok || !ceId) {
      scan.unreadable.push(
        `${m.partition}/${m.offset}: ${parsed.ok ? 'no ce_id header' : parsed.error}`,
      );
      return;
    }
    // A merchant's day-closed (control totals): no saga's event.
    if (parsed.family === CONTROL_EVENTS) return;
    if (parsed.family === SCHEDULE_FAMILY.name) {
      scan.scheduleEvents.push({ event: parsed.event as ScheduleEvent, ceId });
      return;
    }
    // The payout budget is the orchestrator's own saga, started by no command of the run.
    if (parsed.family === PAYOUT_BUDGET_FAMILY.name) return;
    const event = parsed.event as ObservedEvent['event'];
    scan.events.push({ event, ceId });
    const timed = scan.timedBySaga.get(parsed.sagaId) ?? [];
    timed.push({ event, ceId, at: m.timestamp });
    scan.timedBySaga.set(parsed.sagaId, timed);
    scan.familyOfType[event.type] = parsed.family;
  });
  actions.forEach((a, i) => {
    const first = firstAfter.get(i);
    if (isBrokerTarget(a.target) && first !== undefined) a.recoveryMs = first - a.at;
  });
  return scan;
}
