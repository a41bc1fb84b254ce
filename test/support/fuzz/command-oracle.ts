/**
 * What a hostile command must have caused, judged from what was observed: the command-rejected
 * events carrying its command id, the dead letters under its key, the gateway requests of its
 * payment and its saga row. Shared by the jest fuzz suite and scripts/fuzz.ts.
 */
import { findCardNumbers } from '@payments/core';
import { RejectionCode } from '@payments/contracts';
import type { HostileCommand } from './hostile-commands';

export interface ObservedMessage {
  readonly key: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The value as text (JSON or whatever bytes were dead-lettered, as UTF-8). */
  readonly text: string;
  readonly value: Record<string, unknown>;
}

export interface CommandObservation {
  /** command-rejected events whose commandId is the case's (events keyed by its payment). */
  readonly rejections: readonly ObservedMessage[];
  /** Dead letters under the case's key. */
  readonly deadLetters: readonly ObservedMessage[];
  /** Every event and dead letter under the case's key (for the card-data scan). */
  readonly everything: readonly ObservedMessage[];
  /** Gateway requests published for the case's payment. */
  readonly gatewayRequests: number;
  /** The saga row of the case's payment, if any. */
  readonly saga?: { readonly status: string; readonly version: number };
}

/** `rejected:<code>`, `dead-letter:<dlq-reason>`, `none` or `several`. */
export function outcomeOf(observed: CommandObservation): string {
  const total = observed.rejections.length + observed.deadLetters.length;
  if (total === 0) return 'none';
  if (total > 1) return 'several';
  const [rejection] = observed.rejections;
  if (rejection) return `rejected:${String(rejection.value.reason)}`;
  return `dead-letter:${observed.deadLetters[0]?.headers['dlq-reason'] ?? '(no reason header)'}`;
}

/** Every property the case breaks, as sentences naming the case (empty = all hold). */
export function violations(c: HostileCommand, observed: CommandObservation): string[] {
  const out: string[] = [];
  const name = `${c.class} (${c.label}, key ${c.key})`;
  const outcome = outcomeOf(observed);
  const [kind, detail = ''] = outcome.split(':');
  if (kind === 'none' || kind === 'several') {
    out.push(`${name}: ${outcome} outcome, expected exactly one`);
  } else if (kind === 'rejected') {
    if (c.expect.outcome === 'dead-letter')
      out.push(`${name}: rejected (${detail}), expected a dead letter`);
    else if (!c.expect.reasons.some((r) => r === detail))
      out.push(`${name}: rejected with ${detail}, expected one of ${c.expect.reasons.join(', ')}`);
    if (!RejectionCode.safeParse(detail).success)
      out.push(`${name}: reason ${detail} is not a stable rejection code`);
  } else if (kind === 'dead-letter') {
    if (c.expect.outcome === 'rejected')
      out.push(`${name}: dead-lettered (${detail}), expected a rejection`);
    if (!['parse', 'schema', 'non-retriable', 'retries-exhausted'].includes(detail))
      out.push(`${name}: dead letter without a known dlq-reason (${detail})`);
  }
  const expectedRequests = c.before.length; // each valid original sends one gateway request
  if (observed.gatewayRequests !== expectedRequests)
    out.push(`${name}: ${observed.gatewayRequests} gateway requests, expected ${expectedRequests}`);
  if (c.before.length === 0 && observed.saga && observed.saga.status !== 'initial')
    out.push(`${name}: a saga in status ${observed.saga.status} from an invalid command`);
  for (const m of observed.everything) {
    // traceparent is random hex: its digit runs are no card data (and read as such at times).
    const places: Array<[string, string]> = [
      ['key', m.key],
      ['value', m.text],
      ...Object.entries(m.headers).filter(([h]) => h !== 'traceparent'),
    ];
    for (const [place, text] of places) {
      if (findCardNumbers(text).length > 0)
        out.push(
          `${name}: a card number in the ${place} of ${String(m.headers['dlq-reason'] ?? m.value.type)}`,
        );
    }
  }
  return out;
}

/** counts[class][outcome]. */
export function tally(
  cases: readonly HostileCommand[],
  observe: (c: HostileCommand) => CommandObservation,
): Map<string, Map<string, number>> {
  const table = new Map<string, Map<string, number>>();
  for (const c of cases) {
    const row = table.get(c.class) ?? new Map<string, number>();
    const outcome = outcomeOf(observe(c));
    row.set(outcome, (row.get(outcome) ?? 0) + 1);
    table.set(c.class, row);
  }
  return table;
}

/** One line per class: `class  n  outcome × count, …`. */
export function formatTally(table: Map<string, Map<string, number>>): string {
  const width = Math.max(...[...table.keys()].map((k) => k.length));
  return [...table.entries()]
    .map(([cls, row]) => {
      const n = [...row.values()].reduce((a, b) => a + b, 0);
      const outcomes = [...row.entries()]
        .sort((a, b) => b[1] - a[1])
        .map(([o, k]) => `${o} × ${k}`)
        .join(', ');
      return `  ${cls.padEnd(width)}  ${String(n).padStart(5)}  ${outcomes}`;
    })
    .join('\n');
}
