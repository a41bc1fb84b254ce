import { randomUUID } from 'node:crypto';
import { userInfo } from 'node:os';
import {
  CE_SOURCES,
  ceType,
  newTraceparent,
  ReconcileCommand,
  ReconciliationEvent,
  type ReconciliationCompleted,
  type ReconciliationMismatch,
  TOPICS,
  toKafkaHeaders,
} from '@payments/contracts';
import { TimeoutError, withTimeout } from '@payments/core';
import { UsageError } from './errors';
import { type CommonOptions, kafkaOf } from './options';

export interface ReconcileOptions extends CommonOptions {
  readonly from: Date;
  readonly to?: Date;
  readonly endpoint?: string;
  readonly requestedBy?: string;
  readonly wait?: boolean;
  /** With --wait: give up after this many seconds. */
  readonly timeout?: number;
  readonly json?: boolean;
}

export interface ReconcileOutcome {
  readonly runId: string;
  /** With --wait: the run's counts; undefined without --wait. */
  readonly completed?: ReconciliationCompleted;
}

const money = (m?: { minor: number; currency: string }) =>
  m === undefined ? '' : ` ${m.minor} ${m.currency}`;

/** One mismatch as a line: kind, saga, what we reported, what the gateway says. */
export function mismatchLine(m: ReconciliationMismatch): string {
  const gateway =
    m.gateway === undefined
      ? 'no answer'
      : `${m.gateway.status ?? '?'}/${m.gateway.transactionType ?? '?'}${money(m.gateway.amount)}`;
  return `${m.kind} ${m.flow} ${m.sagaId} endpoint=${m.endpointId} ours=${m.ours.status}/${m.ours.operation}${money(m.ours.amount)} gateway=${gateway}`;
}

/**
 * `payments reconcile`: sends a `reconcile` command for the window [from, to) (to defaults to
 * now), and with --wait follows `payments.reconciliation.v1` until the run completes, printing
 * each mismatch (a line, or the event as JSON) and the counts on stderr.
 */
export async function reconcile(
  options: ReconcileOptions,
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<ReconcileOutcome> {
  const to = options.to ?? new Date();
  if (!(options.from < to)) {
    throw new UsageError(
      `--from must be before --to (${options.from.toISOString()} .. ${to.toISOString()})`,
    );
  }
  const runId = randomUUID();
  const command = ReconcileCommand.parse({
    type: 'reconcile',
    commandId: randomUUID(),
    runId,
    from: options.from.toISOString(),
    to: to.toISOString(),
    ...(options.endpoint === undefined ? {} : { endpointId: options.endpoint }),
    requestedBy: options.requestedBy ?? `cli:${userInfo().username}`,
    occurredAt: new Date().toISOString(),
  });
  const kafka = kafkaOf(options);
  const groupId = `payments-cli-reconcile-${runId}`;
  const consumer =
    options.wait === true ? kafka.consumer({ groupId, maxWaitTimeInMs: 250 }) : undefined;
  let completed: ReconciliationCompleted | undefined;
  let done!: () => void;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const handle = (value: Buffer | null): void => {
    let json: unknown;
    try {
      json = JSON.parse(value?.toString('utf8') ?? 'null');
    } catch {
      return; // not ours to judge: the topic's other readers see it too
    }
    const parsed = ReconciliationEvent.safeParse(json);
    if (!parsed.success || parsed.data.runId !== runId) return;
    const event = parsed.data;
    if (event.type === 'reconciliation-mismatch') {
      out(options.json === true ? JSON.stringify(event) : mismatchLine(event));
    } else {
      completed = event;
      done();
    }
  };
  try {
    if (consumer !== undefined) {
      // Subscribed before the command goes out: nothing of this run can be missed.
      await consumer.connect();
      await consumer.subscribe({ topics: [TOPICS.reconciliation], fromBeginning: true });
      await consumer.run({
        autoCommit: false,
        eachMessage: ({ message }) => {
          handle(message.value);
          return Promise.resolve();
        },
      });
    }
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    try {
      await producer.send({
        topic: TOPICS.reconciliationCommands,
        acks: -1,
        messages: [
          {
            key: runId,
            value: JSON.stringify(command),
            headers: toKafkaHeaders({
              id: command.commandId,
              type: ceType.command('reconcile'),
              source: CE_SOURCES.admin,
              subject: runId,
              time: command.occurredAt,
              traceparent: newTraceparent(),
            }),
          },
        ],
      });
    } finally {
      await producer.disconnect();
    }
    err(`reconciliation run ${runId} requested: ${command.from} .. ${command.to}`);
    if (consumer === undefined) {
      if (options.json === true) out(JSON.stringify({ runId, command }));
      else out(runId);
      return { runId };
    }
    const timeoutMs = (options.timeout ?? 600) * 1000;
    try {
      await withTimeout(finished, timeoutMs, `reconciliation run ${runId}`);
    } catch (error) {
      if (error instanceof TimeoutError) {
        throw new Error(
          `reconciliation run ${runId} did not complete within ${timeoutMs / 1000} s (it goes on; follow it on ${TOPICS.reconciliation})`,
        );
      }
      throw error;
    }
    // Assigned in the consumer's callback: TypeScript cannot see it, so read it through a copy.
    const c: ReconciliationCompleted | undefined = completed;
    if (c !== undefined) {
      const kinds = Object.entries(c.byKind)
        .map(([kind, n]) => `${kind} ${n}`)
        .join(', ');
      err(
        `run ${runId}: ${c.checked} checked, ${c.matched} matched, ${c.mismatched} mismatched${kinds ? ` (${kinds})` : ''}, ${c.unanswered ?? 0} unanswered, ${c.handedToSagas ?? 0} handed to their sagas`,
      );
    }
    return { runId, ...(c === undefined ? {} : { completed: c }) };
  } finally {
    if (consumer !== undefined) {
      await consumer.disconnect().catch(() => undefined);
      // The throw-away group committed nothing; leave no trace of it on the broker.
      const admin = kafka.admin();
      await admin
        .connect()
        .then(() => admin.deleteGroups([groupId]))
        .catch(() => undefined)
        .finally(() => admin.disconnect());
    }
  }
}
