import type { RejectionCode } from '@payments/contracts';

/** Why an input changed nothing (for logs and metrics; not an error), in every gateway flow. */
export type IgnoreReason =
  | 'NO_OPERATION_IN_FLIGHT'
  | 'STALE_REQUEST'
  | 'DUPLICATE_RESULT'
  | 'UNKNOWN_ORDER'
  | 'NOT_ABOUT_THIS_OPERATION'
  /** A browser return or an unverifiable callback: it only prompts a status query. */
  | 'HINT_ONLY'
  | 'NO_NEWS'
  | 'TIMER_OBSOLETE';

export interface Rejection {
  code: RejectionCode;
  message: string;
}

/**
 * A flow decider's answer: events to append (versions continue the state's) and effects to run in
 * the same transaction; a refused command (its command-rejected event, no effects); or an ignore
 * with its reason.
 */
export type FlowDecision<Event, Effect, Reason extends string = IgnoreReason> =
  | { outcome: 'accepted'; events: Event[]; effects: Effect[] }
  | { outcome: 'rejected'; rejection: Rejection; events: Event[]; effects: [] }
  | { outcome: 'ignored'; reason: Reason; events: []; effects: Effect[] };

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An event before the decider stamps its saga id, version and time on it. */
export type Draft<Event, IdField extends PropertyKey> = DistributiveOmit<
  Event,
  IdField | 'version' | 'occurredAt'
>;

/**
 * Drafts as events: the saga id under the flow's field name, versions continuing `version` (+1,
 * +2, … in the order given), the decision's time.
 */
export function stampDrafts<Event, IdField extends string>(
  version: number,
  id: Record<IdField, string>,
  now: string,
  drafts: readonly Draft<Event, IdField>[],
): Event[] {
  // The draft type is the event without exactly the three fields added here.
  return drafts.map(
    (d, i) => ({ ...d, ...id, version: version + i + 1, occurredAt: now }) as Event,
  );
}

export function ignoredWith<Effect, Reason extends string>(
  reason: Reason,
  effects: Effect[] = [],
): { outcome: 'ignored'; reason: Reason; events: []; effects: Effect[] } {
  return { outcome: 'ignored', reason, events: [], effects };
}

/**
 * How a timer set treats one of its kind and scope already pending: `any`, one due no later stays
 * as it is (time and payload); `hinted`, only one a hint brought forward (its payload says
 * `hinted: true`) and due no later. Without it, the set replaces whatever is pending.
 */
export type KeepSooner = 'any' | 'hinted';

export function addMs(iso: string, ms: number): string {
  return new Date(Date.parse(iso) + ms).toISOString();
}

export function msBetween(fromIso: string, toIso: string): number {
  return Date.parse(toIso) - Date.parse(fromIso);
}

/** The end of a switch that handled every case (the compiler proves `value` impossible). */
export function unhandled(value: never, what: string): never {
  throw new Error(`unhandled ${what} ${JSON.stringify(value)}`);
}
