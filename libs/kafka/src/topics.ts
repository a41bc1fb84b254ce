import type { Admin } from 'kafkajs';
import type { KafkaLogger } from './logger';

export interface TopicSpec {
  readonly topic: string;
  readonly numPartitions: number;
}

const LEADER_WAIT_MS = 30_000;

/**
 * Creates the topics that do not exist yet (idempotent: an existing topic, or one created by
 * another process at the same moment, is fine), then waits until every partition has a leader.
 * An existing topic with a different partition count is left alone, with a warning.
 */
export async function ensureTopics(
  admin: Admin,
  specs: readonly TopicSpec[],
  logger: KafkaLogger,
): Promise<void> {
  if (specs.length === 0) return;
  const unique = new Map(specs.map((spec) => [spec.topic, spec]));
  const existing = new Set(await admin.listTopics());
  const missing = [...unique.values()].filter((spec) => !existing.has(spec.topic));
  if (missing.length > 0) {
    // kafkajs returns false (no throw) when every failure is TOPIC_ALREADY_EXISTS.
    await admin.createTopics({
      waitForLeaders: true,
      topics: missing.map((spec) => ({ topic: spec.topic, numPartitions: spec.numPartitions })),
    });
    logger.info({ topics: missing.map((s) => s.topic) }, 'created Kafka topics');
  }
  const topics = [...unique.keys()];
  const deadline = Date.now() + LEADER_WAIT_MS;
  for (let round = 0; ; round++) {
    const { topics: metadata } = await admin.fetchTopicMetadata({ topics });
    const leaderless = metadata.filter((t) => t.partitions.some((p) => p.leader < 0));
    for (const t of round === 0 ? metadata : []) {
      const wanted = unique.get(t.name)?.numPartitions;
      if (existing.has(t.name) && wanted !== undefined && t.partitions.length !== wanted) {
        logger.warn(
          { topic: t.name, partitions: t.partitions.length, configured: wanted },
          'existing topic has a different partition count than configured; left unchanged',
        );
      }
    }
    if (leaderless.length === 0) return;
    if (Date.now() > deadline) {
      throw new Error(
        `topics without partition leaders: ${leaderless.map((t) => t.name).join(', ')}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
