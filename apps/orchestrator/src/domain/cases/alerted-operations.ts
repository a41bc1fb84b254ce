import type { Money } from '@payments/contracts';
import { expectedChargeSubjectId } from '../../flows/recurring-schedule/domain/gateway-charged-model';

/**
 * What of a saga's stored state a case is about (issue 33 item 3): every request it still waits
 * for, and those of them alerted for a person, read from the row's JSON as the case sweep sees it
 * (pure; no flow's decider involved). One place, so the sweep that opens cases and the one that
 * closes them (the saga no longer waits: the gateway's evidence settled it) read the same thing:
 *  - every flow: the operation in flight (`inFlight`);
 *  - a card payment besides: its create-card-ref (`cardRefRequest`; a get-card-info only reads,
 *    asked again until answered, and is no case);
 *  - a schedule the gateway charges: its registration while `registering`, each charge being
 *    confirmed (`charges[].op`), and each cycle alerted `not-found` (`missingCycles`, asked for by
 *    a request id derived from schedule and cycle, as the schedule's own search does).
 */
export interface SagaOperation {
  readonly operation: string;
  readonly requestId: string;
  readonly alerted?: boolean;
  readonly concern?: string;
  readonly unknownSince?: string;
  readonly amount?: Money;
  /** Which of the saga's events are evidence about it. */
  readonly evidence: EvidenceMatch;
}

/** The saga events that are evidence about an operation. */
export type EvidenceMatch =
  | { readonly by: 'request'; readonly requestId: string }
  | { readonly by: 'type-prefix'; readonly prefix: string }
  | { readonly by: 'gateway-order'; readonly gatewayOrderId: string }
  | { readonly by: 'cycle'; readonly cycle: number; readonly types: readonly string[] };

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null;

function operationOf(
  v: unknown,
  evidence?: (requestId: string) => EvidenceMatch,
  amount?: unknown,
): SagaOperation[] {
  if (!isObject(v) || typeof v.requestId !== 'string' || typeof v.operation !== 'string') return [];
  const requestId = v.requestId;
  return [
    {
      operation: v.operation,
      requestId,
      ...(v.alerted === true ? { alerted: true } : {}),
      ...(typeof v.concern === 'string' ? { concern: v.concern } : {}),
      ...(typeof v.unknownSince === 'string' ? { unknownSince: v.unknownSince } : {}),
      ...(isObject(v.amount)
        ? { amount: v.amount as unknown as Money }
        : isObject(amount)
          ? { amount: amount as unknown as Money }
          : {}),
      evidence: evidence?.(requestId) ?? { by: 'request', requestId },
    },
  ];
}

/** Every request the saga still waits for (alerted or not). */
export function waitingOperations(flow: string, state: unknown): SagaOperation[] {
  if (!isObject(state)) return [];
  const ops = [...operationOf(state.inFlight)];
  if (flow === 'card-payment' && isObject(state.cardRefRequest))
    if (state.cardRefRequest.operation === 'create-card-ref')
      ops.push(...operationOf(state.cardRefRequest));
  if (flow === 'recurring-schedule') ops.push(...scheduleOperations(state));
  return ops;
}

/** The requests of the saga alerted for a person (each is due a case). */
export function alertedOperations(flow: string, state: unknown): SagaOperation[] {
  return waitingOperations(flow, state).filter((op) => op.alerted === true);
}

/** A schedule's operations, at the schedule's amount (each cycle's) unless they name their own. */
function scheduleOperations(state: Json): SagaOperation[] {
  const ops: SagaOperation[] = [];
  const terms = isObject(state.terms) ? state.terms : {};
  if (state.status === 'registering')
    ops.push(
      ...operationOf(
        state.registration,
        () => ({ by: 'type-prefix', prefix: 'schedule-registration-' }),
        terms.amount,
      ),
    );
  const charges = Array.isArray(state.charges) ? (state.charges as unknown[]) : [];
  for (const charge of charges) {
    if (!isObject(charge) || charge.outcome !== 'confirming') continue;
    const gatewayOrderId = charge.gatewayOrderId;
    if (typeof gatewayOrderId !== 'string') continue;
    ops.push(
      ...operationOf(charge.op, () => ({ by: 'gateway-order', gatewayOrderId }), terms.amount),
    );
  }
  const missing = Array.isArray(state.missingCycles) ? (state.missingCycles as unknown[]) : [];
  if (typeof terms.scheduleId === 'string')
    for (const cycle of missing) {
      if (typeof cycle !== 'number') continue;
      ops.push({
        operation: 'rebill',
        requestId: expectedChargeSubjectId(terms.scheduleId, cycle),
        alerted: true,
        concern: 'no-trace',
        ...(isObject(terms.amount) ? { amount: terms.amount as unknown as Money } : {}),
        evidence: { by: 'cycle', cycle, types: ['gateway-charge-alert'] },
      });
    }
  return ops;
}
