import type { Kafka } from 'kafkajs';
import { whileMetadataSettles } from '@payments/kafka';
import { TOPICS } from '@payments/contracts';

/**
 * The consumer groups of the stack's processes and the topics each reads. The orchestrator's group
 * is its KAFKA_CONSUMER_GROUP (default `orchestrator`, apps/orchestrator/src/config.ts); the
 * adapter's is fixed (`CONSUMER_GROUP` in apps/gateway-adapter/src/app.module.ts); callback-ingest
 * consumes nothing. The orchestrator's topics are its handlers' (ORCHESTRATOR_HANDLERS in
 * apps/orchestrator/src/transport/kafka/handlers.ts): a handler added there belongs here too.
 */
export function stackConsumerGroups(
  orchestratorGroup = 'orchestrator',
): ReadonlyArray<{ readonly groupId: string; readonly topics: readonly string[] }> {
  return [
    {
      groupId: orchestratorGroup,
      topics: [
        TOPICS.commands,
        TOPICS.gatewayResults,
        TOPICS.reconciliationCommands,
        TOPICS.gatewayCallbacks,
      ],
    },
    { groupId: 'gateway-adapter', topics: [TOPICS.gatewayRequests] },
  ];
}

/** How long a group may still have members: a SIGKILLed member leaves when its session expires. */
const MEMBERS_GONE_WITHIN_MS = 60_000;
const RETRY_MS = 500;

/**
 * Points a consumer group at the current end of those of these topics that exist, so it reads
 * only what is produced from now on — never what earlier runs left unconsumed (a topic that does
 * not exist yet holds nothing left over, and is not created here: its creator picks its
 * partitions and replication). The broker refuses to move the offsets of a group with members;
 * a member of an earlier run killed with SIGKILL stays one until its session expires, so this is
 * asked again until `membersGoneWithinMs`. (resetOffsets would commit -1, "use the reset policy",
 * which a fromBeginning consumer turns into the earliest offset: the high watermarks are
 * committed instead.)
 */
export async function pointGroupAtEnd(
  kafka: Kafka,
  groupId: string,
  topics: readonly string[],
  membersGoneWithinMs = MEMBERS_GONE_WITHIN_MS,
): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const deadline = Date.now() + membersGoneWithinMs;
    for (const topic of topics.filter((t) => existing.has(t))) {
      // A topic created moments ago may have no leader yet: asked again while that settles.
      const offsets = await whileMetadataSettles(() => admin.fetchTopicOffsets(topic));
      const partitions = offsets.map((p) => ({ partition: p.partition, offset: p.high }));
      for (;;) {
        try {
          await admin.setOffsets({ groupId, topic, partitions });
          break;
        } catch (error) {
          const message = error instanceof Error ? error.message : String(error);
          if (!/no running instances/.test(message) || Date.now() >= deadline) {
            throw new Error(`cannot point group ${groupId} at the end of ${topic}: ${message}`);
          }
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        }
      }
    }
  } finally {
    await admin.disconnect();
  }
}
