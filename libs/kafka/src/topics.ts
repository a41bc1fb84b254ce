import type { Admin } from 'kafkajs';
import type { KafkaLogger } from './logger';

export interface TopicSpec {
  readonly topic: string;
  readonly numPartitions: number;
  /** Copies of each partition (KAFKA_REPLICATION_FACTOR); default 1, one broker. */
  readonly replicationFactor?: number;
  /**
   * The topic's `min.insync.replicas` (KAFKA_MIN_INSYNC_REPLICAS): with acks=all, a write is
   * acknowledged only once this many replicas have it; default 1. A cluster of three: 3 and 2.
   */
  readonly minInsyncReplicas?: number;
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
    // kafkajs returns false (no throw) when every failure is TOPIC_ALREADY_EXISTS. Leaders are
    // awaited below, not by kafkajs: on a cluster, its metadata request can reach a broker that
    // has not heard of the new topic yet and fail with UNKNOWN_TOPIC_OR_PARTITION.
    await admin.createTopics({
      waitForLeaders: false,
      topics: missing.map((spec) => ({
        topic: spec.topic,
        numPartitions: spec.numPartitions,
        replicationFactor: spec.replicationFactor ?? 1,
        configEntries: [
          { name: 'min.insync.replicas', value: String(spec.minInsyncReplicas ?? 1) },
        ],
      })),
    });
    logger.info(
      {
        topics: missing.map((s) => s.topic),
        replicationFactor: missing[0]?.replicationFactor ?? 1,
        minInsyncReplicas: missing[0]?.minInsyncReplicas ?? 1,
      },
      'created Kafka topics',
    );
  }
  const topics = [...unique.keys()];
  const deadline = Date.now() + LEADER_WAIT_MS;
  for (let checked = false; ; checked = true) {
    let metadata: Awaited<ReturnType<Admin['fetchTopicMetadata']>>['topics'];
    try {
      ({ topics: metadata } = await admin.fetchTopicMetadata({ topics }));
    } catch (error) {
      // A broker that does not know the new topic yet: ask again until the deadline.
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    const leaderless = metadata.filter((t) => t.partitions.some((p) => p.leader < 0));
    for (const t of checked ? [] : metadata) {
      const spec = unique.get(t.name);
      if (!existing.has(t.name) || spec === undefined) continue;
      if (t.partitions.length !== spec.numPartitions) {
        logger.warn(
          { topic: t.name, partitions: t.partitions.length, configured: spec.numPartitions },
          'existing topic has a different partition count than configured; left unchanged',
        );
      }
      const replicas = t.partitions[0]?.replicas.length;
      if (replicas !== undefined && replicas !== (spec.replicationFactor ?? 1)) {
        logger.warn(
          { topic: t.name, replicas, configured: spec.replicationFactor ?? 1 },
          'existing topic has a different replication factor than configured; left unchanged',
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
