/** When the chaos run's stack is quiet: nothing left on the orchestrator's inputs or in its outbox. */
import { Kafka } from 'kafkajs';
import { TOPICS } from '@payments/contracts';
import { newPgClient } from '@payments/database';
import { topicEndOffsets } from '../stack/kafka-io';
import { PaymentStack } from '../stack/payment-stack';

const ORCHESTRATOR_INPUTS = [TOPICS.commands, TOPICS.gatewayResults, TOPICS.gatewayCallbacks];
/** The orchestrator has handled everything on its inputs and published its whole outbox. */
export async function quiet(
  stack: PaymentStack,
  kafka: Kafka,
  orchestratorDb: string,
): Promise<boolean> {
  try {
    if ((await outboxCount(orchestratorDb)) > 0) return false;
    const ends = await topicEndOffsets(kafka, ORCHESTRATOR_INPUTS);
    const admin = kafka.admin();
    await admin.connect();
    try {
      const committed = await admin.fetchOffsets({
        groupId: 'orchestrator',
        topics: [...ORCHESTRATOR_INPUTS],
      });
      for (const { topic, partitions } of committed) {
        for (const p of partitions) {
          if (Number(p.offset) < (ends.get(`${topic}/${p.partition}`) ?? 0)) return false;
        }
      }
    } finally {
      await admin.disconnect();
    }
    return (await stack.controls.callbacks()).idle;
  } catch {
    return false; // the broker or the sandbox busy for a moment: not quiet yet
  }
}

/** An unpublished outbox row older than this is a backlog, not a message on its way. */
export const BACKLOG_AFTER_SECONDS = 10;

export async function outboxCount(url: string, olderThanSeconds = 0): Promise<number> {
  const client = newPgClient(url);
  await client.connect();
  try {
    const result = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM outbox WHERE published_at IS NULL AND created_at <= now() - make_interval(secs => $1)`,
      [olderThanSeconds],
    );
    return Number(result.rows[0].n);
  } finally {
    await client.end();
  }
}

/**
 * The cases the orchestrator opened for alerted sagas (issue 33): those still open for a person
 * (open, proposed, reopened), how many of them hold evidence, and the sagas those are about.
 * Zero when the table is absent.
 */
export async function openCaseCounts(url: string): Promise<{
  readonly open: number;
  readonly withEvidence: number;
  readonly sagasWithEvidence: readonly string[];
}> {
  const client = newPgClient(url);
  await client.connect();
  try {
    const result = await client.query<{ open: string; with_evidence: string }>(
      `SELECT count(*) AS open,
              count(*) FILTER (WHERE jsonb_array_length(record->'evidence') > 0) AS with_evidence
         FROM cases WHERE status IN ('open', 'proposed', 'reopened')`,
    );
    const sagas = await client.query<{ saga_id: string }>(
      `SELECT DISTINCT saga_id FROM cases
        WHERE status IN ('open', 'proposed', 'reopened')
          AND jsonb_array_length(record->'evidence') > 0`,
    );
    return {
      open: Number(result.rows[0].open),
      withEvidence: Number(result.rows[0].with_evidence),
      sagasWithEvidence: sagas.rows.map((r) => r.saga_id),
    };
  } catch {
    return { open: 0, withEvidence: 0, sagasWithEvidence: [] };
  } finally {
    await client.end();
  }
}
