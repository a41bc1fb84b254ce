import type { Admin } from 'kafkajs';

/**
 * A consumer group's lag on one topic: high watermark minus committed offset, summed over
 * partitions; a partition without a committed offset counts from its low watermark.
 */
export async function topicLag(admin: Admin, groupId: string, topic: string): Promise<number> {
  const [watermarks, committed] = await Promise.all([
    admin.fetchTopicOffsets(topic),
    admin.fetchOffsets({ groupId, topics: [topic] }),
  ]);
  const committedBy = new Map(
    (committed.find((c) => c.topic === topic)?.partitions ?? []).map((p) => [
      p.partition,
      BigInt(p.offset),
    ]),
  );
  let lag = 0n;
  for (const w of watermarks) {
    const high = BigInt(w.high);
    const c = committedBy.get(w.partition);
    const from = c !== undefined && c >= 0n ? c : BigInt(w.low);
    if (high > from) lag += high - from;
  }
  return Number(lag);
}
