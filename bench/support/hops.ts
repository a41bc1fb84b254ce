/**
 * Where a sale's time goes, hop by hop, from timestamps the pipeline keeps anyway: the load
 * generator's scheduled send; the orchestrator's command record (`commands.recorded_at`: the start
 * of the transaction that consumed it); the gateway request's Kafka timestamp (the relay handed it
 * to its producer: this hop holds the decision's commit and the relay's wait for its round); the
 * sandbox's ledger entry (the adapter consumed the request, wrote its own rows, signed and called
 * the gateway); the result's Kafka timestamp (the adapter's produce); the final event's outbox row
 * (`created_at`: the start of the transaction that consumed the result); the final event's Kafka
 * timestamp (the relay's produce); the event seen by the load generator. Every clock is this
 * machine's, so the hops add up to the sale's latency.
 */
import type { Kafka } from 'kafkajs';
import { Client } from 'pg';
import { TOPICS } from '@payments/contracts';
import { scanTopics, topicEndOffsets } from '../../scripts/stack/kafka-io';

export const HOPS = [
  'sent → command consumed',
  'command consumed → request produced',
  'request produced → gateway charged',
  'gateway charged → result produced',
  'result produced → result consumed',
  'result consumed → final event produced',
  'final event produced → event received',
] as const;

export interface SaleTimes {
  readonly paymentId: string;
  readonly sentAt: number;
  readonly receivedAt: number;
}

/** The offsets where a mode starts on the topics read here (so only its messages are read). */
export function hopOffsets(kafka: Kafka): Promise<Map<string, number>> {
  return topicEndOffsets(kafka, [TOPICS.gatewayRequests, TOPICS.gatewayResults, TOPICS.events]);
}

/** Per hop, the milliseconds of every sale all of whose timestamps were found. */
export async function hopLatencies(
  sales: readonly SaleTimes[],
  orchestratorDatabaseUrl: string,
  ledger: ReadonlyArray<{ clientOrderId: string; movement: string; at: number }>,
  kafka: Kafka,
  from: ReadonlyMap<string, number>,
): Promise<{ hops: Map<string, number[]>; complete: number }> {
  const ids = sales.map((s) => s.paymentId);
  const db = new Client({ connectionString: orchestratorDatabaseUrl });
  await db.connect();
  const stamps = new Map<string, number[]>();
  try {
    const { rows } = await db.query<{
      saga_id: string;
      consumed: number;
      result_consumed: number | null;
    }>(
      `SELECT c.saga_id,
              extract(epoch FROM min(c.recorded_at)) * 1000 AS consumed,
              (SELECT extract(epoch FROM max(o.created_at)) * 1000 FROM outbox o
                WHERE o.aggregate_id = c.saga_id::text AND o.topic = $2) AS result_consumed
         FROM commands c WHERE c.saga_id = ANY($1::uuid[]) GROUP BY c.saga_id`,
      [ids, TOPICS.events],
    );
    for (const r of rows) {
      stamps.set(r.saga_id, [Number(r.consumed), Number(r.result_consumed ?? NaN)]);
    }
  } finally {
    await db.end();
  }
  const charged = new Map<string, number>();
  for (const e of ledger) if (e.movement === 'charged') charged.set(e.clientOrderId, e.at);
  // Per payment: its first gateway request's and result's produce time, its last event's.
  const produced = new Map<string, number>(); // `<topic> <payment id>`
  await scanTopics(
    kafka,
    [TOPICS.gatewayRequests, TOPICS.gatewayResults, TOPICS.events],
    (m) => {
      const key = `${m.topic} ${m.key?.toString('utf8') ?? ''}`;
      const was = produced.get(key);
      if (was === undefined || (m.topic === TOPICS.events && m.timestamp > was)) {
        produced.set(key, m.timestamp);
      }
    },
    from,
  );
  const hops = new Map<string, number[]>(HOPS.map((h) => [h, []]));
  let complete = 0;
  for (const sale of sales) {
    const [consumed, resultConsumed] = stamps.get(sale.paymentId) ?? [];
    const points = [
      sale.sentAt,
      consumed,
      produced.get(`${TOPICS.gatewayRequests} ${sale.paymentId}`),
      charged.get(sale.paymentId),
      produced.get(`${TOPICS.gatewayResults} ${sale.paymentId}`),
      resultConsumed,
      produced.get(`${TOPICS.events} ${sale.paymentId}`),
      sale.receivedAt,
    ];
    if (points.some((p) => p === undefined || !Number.isFinite(p))) continue;
    complete += 1;
    HOPS.forEach((hop, i) =>
      hops.get(hop)?.push((points[i + 1] as number) - (points[i] as number)),
    );
  }
  return { hops, complete };
}

export function hopLines(
  hops: ReadonlyMap<string, number[]>,
  complete: number,
  of: number,
): string {
  const at = (sorted: number[], q: number) =>
    sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  const lines = [
    `  where a sale's time goes (${complete} of ${of} sales with every timestamp), ms:`,
  ];
  lines.push(`    ${'hop'.padEnd(40)} ${'p50'.padStart(7)} ${'p99'.padStart(7)}`);
  for (const [hop, values] of hops) {
    const sorted = [...values].sort((a, b) => a - b);
    lines.push(
      `    ${hop.padEnd(40)} ${at(sorted, 0.5).toFixed(1).padStart(7)} ${at(sorted, 0.99).toFixed(1).padStart(7)}`,
    );
  }
  return `${lines.join('\n')}\n`;
}
