import { Inject, Injectable } from '@nestjs/common';
import type { Kafka } from 'kafkajs';
import { KAFKA_CLIENT, KafkaProducerService } from '@payments/kafka';
import { DLQ_SUFFIX } from '@payments/kafka/dlq';
import {
  type DeadLetter,
  type DeadLetterRecord,
  describeDeadLetter,
  replayOf,
} from '@payments/kafka/dead-letters';
import {
  deadLetterRecordOf,
  existingDeadLetterTopics,
  readToEnd,
} from '@payments/kafka/read-to-end';
import type { AdminPrincipal } from '../../domain/admin/admin-tokens';
import { Database } from '../../persistence/database';
import { DeadLetterReplayEntity } from '../../persistence/entities';
import { Clock, IdGenerator } from '../../runtime/clock';

/** What the admin API shows of a dead letter: where, when, why — never its value (only its size). */
export type DeadLetterView = DeadLetter;

export interface DeadLetterPage {
  /** Newest first, at most `limit`. */
  readonly items: readonly DeadLetterView[];
  /** How many dead letters the `*.dlq` topics hold now. */
  readonly total: number;
  readonly topics: readonly string[];
}

export type ReplayResult =
  | {
      readonly kind: 'replayed';
      readonly auditId: string;
      readonly deadLetter: string;
      readonly replayedTo: string;
      readonly key: string | null;
    }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'refused'; readonly message: string };

/** `<topic>.dlq/<partition>/<offset>`, as `DeadLetter.at` names a dead letter. */
const AT = /^(?<topic>[A-Za-z0-9._-]{1,249})\/(?<partition>\d{1,9})\/(?<offset>\d{1,19})$/;

export function parseDeadLetterAt(
  at: string,
): { topic: string; partition: number; offset: string } | undefined {
  const m = AT.exec(at);
  if (m?.groups === undefined || !m.groups.topic.endsWith(DLQ_SUFFIX)) return undefined;
  return {
    topic: m.groups.topic,
    partition: Number(m.groups.partition),
    offset: m.groups.offset,
  };
}

/**
 * The dead letters for the admin API, by the same rules as `payments dlq` (libs/kafka
 * dead-letters.ts): listed from every `*.dlq` topic, and one replayed to its original topic as the
 * CLI replays it (key, value and original headers, `dlq-replayed-from` added). A replay is audited
 * in `dead_letter_replays`: the row is written in a transaction that commits only after the broker
 * acknowledged the record, so no replay goes unaudited; if the commit then fails, the record went
 * without its row — replaying again is harmless (consumers de-duplicate by ce_id).
 */
@Injectable()
export class DeadLetterService {
  constructor(
    @Inject(KAFKA_CLIENT) private readonly kafka: Kafka,
    private readonly producer: KafkaProducerService,
    private readonly db: Database,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
  ) {}

  async list(limit: number): Promise<DeadLetterPage> {
    const topics = await existingDeadLetterTopics(this.kafka);
    const letters: DeadLetter[] = [];
    await readToEnd(
      this.kafka,
      topics,
      (m) => void letters.push(describeDeadLetter(deadLetterRecordOf(m))),
    );
    letters.sort((a, b) => b.time.localeCompare(a.time) || b.at.localeCompare(a.at));
    return { items: letters.slice(0, limit), total: letters.length, topics };
  }

  async replay(principal: AdminPrincipal, at: string, reason: string): Promise<ReplayResult> {
    const where = parseDeadLetterAt(at);
    if (where === undefined) return { kind: 'not-found' };
    const topics = await existingDeadLetterTopics(this.kafka);
    if (!topics.includes(where.topic)) return { kind: 'not-found' };
    let found: DeadLetterRecord | undefined;
    await readToEnd(this.kafka, [where.topic], (m) => {
      if (m.partition === where.partition && m.offset === where.offset)
        found = deadLetterRecordOf(m);
    });
    if (found === undefined) return { kind: 'not-found' };
    const replay = replayOf(found);
    if ('refused' in replay) return { kind: 'refused', message: replay.refused };
    const letter = describeDeadLetter(found);
    const auditId = this.ids.next();
    await this.db.transaction(async (tx) => {
      await tx
        .createQueryBuilder()
        .insert()
        .into(DeadLetterReplayEntity)
        .values({
          id: auditId,
          at: this.clock.now(),
          actor: principal.name,
          role: principal.role,
          reason,
          deadLetter: letter.at,
          replayedTo: replay.topic,
          recordKey: letter.key,
        })
        .updateEntity(false)
        .execute();
      await this.producer.sendRaw(replay.topic, [
        { key: replay.key, value: replay.value, headers: replay.headers },
      ]);
    });
    return {
      kind: 'replayed',
      auditId,
      deadLetter: letter.at,
      replayedTo: replay.topic,
      key: letter.key,
    };
  }
}
