import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { BackgroundLoop, type RoundOutcome } from '@payments/core';
import { KafkaProducerService } from '@payments/kafka';
import type { Client } from 'pg';
import { classifyDatabaseError, newPgClient } from '@payments/database';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../../config';
import { relayBackoffMs } from './outbox-rows';
import { OUTBOX_CHANNEL } from './outbox.writer';
import { outboxMetrics } from './outbox-metrics';

/** Session advisory lock of the one active relay per database ("outbxrly" in ASCII). */
export const RELAY_LOCK_KEY = '8031170174785645689';

/** The backlog gauge's query: unpublished rows and the oldest one's age (seconds). */
const BACKLOG = `SELECT count(*)::int AS backlog,
       COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0)::float8 AS lag
  FROM outbox WHERE published_at IS NULL`;

interface OutboxRecord {
  id: string;
  topic: string;
  message_key: string;
  headers: Record<string, string>;
  payload: unknown;
}

/**
 * Publishes committed outbox rows to Kafka, in `sequence` order, and stamps them published after
 * the broker acknowledged.
 *
 *  - One dedicated pg connection holds `pg_try_advisory_lock(RELAY_LOCK_KEY)`: only one relay per
 *    database publishes, so two replicas never interleave a payment's messages. A standby retries
 *    the lock every OUTBOX_POLL_MS; if the leader's connection dies PostgreSQL frees the lock.
 *  - The same connection LISTENs on `orchestrator_outbox`: writers NOTIFY in their transaction, so
 *    a commit wakes the relay at once; OUTBOX_POLL_MS is only the fallback.
 *  - Selects `published_at IS NULL ORDER BY sequence` (never "sequence > last published": a
 *    sequence is taken at insert, not commit). Per payment the order is safe: all rows of one
 *    payment are written under its row lock, so a later row commits after an earlier one.
 *  - A round's rows go out in one produce call (grouped by topic, in sequence order per topic).
 *    A failed call leaves them all unpublished (attempts + 1) and the next round re-sends them,
 *    in order, before anything later; the relay backs off (200 ms doubling up to
 *    OUTBOX_MAX_BACKOFF_MS).
 *  - At least once: a crash between the ack and the stamp publishes the rows again with the same
 *    ce_id; consumers deduplicate.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(OutboxRelay.name);
  private readonly metrics = outboxMetrics();
  private readonly loop: BackgroundLoop;
  private client: Client | undefined;
  private leader = false;

  constructor(
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
    private readonly producer: KafkaProducerService,
  ) {
    this.loop = new BackgroundLoop({
      runOnce: () => this.round(),
      idleMs: config.outbox.pollMs,
      backoffMs: (failures) => relayBackoffMs(failures, config.outbox.maxBackoffMs),
      onError: (error, failures, delayMs) => {
        this.metrics.failures.inc();
        this.logger.warn(
          `outbox relay: round failed (${failures} in a row), retry in ${delayMs} ms: ${String(error)}`,
        );
      },
    });
  }

  onApplicationBootstrap(): void {
    if (this.config.outbox.relayEnabled) this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  /** True while this instance holds the relay lock. */
  get isLeader(): boolean {
    return this.leader;
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
    await this.disconnect();
  }

  /** One round: take the lock if not the leader yet (a standby retries every poll), publish. */
  private async round(): Promise<RoundOutcome> {
    const client = await this.connection();
    try {
      if (!this.leader) {
        this.leader = await this.tryLock(client);
        if (!this.leader) return 'idle';
        this.logger.log('outbox relay: lock acquired, publishing');
      }
      const endRound = this.metrics.roundSeconds.startTimer();
      let published: number;
      try {
        published = await this.publishRound(client);
      } catch (error) {
        endRound({ outcome: 'failed' });
        throw error;
      }
      endRound({ outcome: published > 0 ? 'published' : 'empty' });
      return published < this.config.outbox.batchSize ? 'idle' : 'busy';
    } catch (error) {
      // A broken connection or a demoted primary (a failover): the lock, if held, went with the
      // session. Drop the connection so the next round connects to the new primary
      // (DATABASE_URL with several hosts) and takes the lock there again.
      if (classifyDatabaseError(error) !== 'other') await this.disconnect();
      throw error;
    }
  }

  private async connection(): Promise<Client> {
    if (this.client) return this.client;
    // The writable primary of DATABASE_URL (several hosts: the one that accepts writes).
    const client = newPgClient(this.config.database.url, {
      application_name: 'orchestrator-outbox-relay',
    });
    client.on('error', (error) => {
      this.logger.warn(`outbox relay: connection lost: ${error.message}`);
      if (this.client === client) this.client = undefined;
      this.leader = false;
    });
    client.on('notification', () => this.loop.wake());
    try {
      await client.connect();
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    this.client = client;
    this.leader = false;
    return client;
  }

  private async tryLock(client: Client): Promise<boolean> {
    const { rows } = await client.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_lock($1::bigint) AS locked',
      [RELAY_LOCK_KEY],
    );
    return rows[0]?.locked === true;
  }

  /**
   * One round: up to OUTBOX_BATCH_SIZE rows in one produce call (grouped by topic, each topic's
   * rows in sequence order), then one statement stamps them published and reads the backlog.
   * Three round trips whatever the number of topics (two statements and the produce call).
   */
  private async publishRound(client: Client): Promise<number> {
    const { rows } = await client.query<OutboxRecord>(
      `SELECT id, topic, message_key, headers, payload FROM outbox
        WHERE published_at IS NULL ORDER BY sequence LIMIT $1`,
      [this.config.outbox.batchSize],
    );
    if (rows.length === 0) {
      this.metrics.backlog.set(0);
      this.metrics.lag.set(0);
      return 0;
    }
    const ids = rows.map((r) => r.id);
    try {
      await this.producer.sendTopics(
        groupByTopic(rows).map(([topic, group]) => ({
          topic,
          messages: group.map((r) => ({
            key: r.message_key,
            value: r.payload,
            headers: r.headers,
          })),
        })),
      );
    } catch (error) {
      await client.query('UPDATE outbox SET attempts = attempts + 1 WHERE id = ANY($1::uuid[])', [
        ids,
      ]);
      await this.refreshBacklog(client);
      throw error;
    }
    // The CTE's UPDATE is not visible to the same statement's SELECT: the stamped ids are left out.
    const { rows: backlog } = await client.query<{ backlog: number; lag: number }>(
      `WITH stamped AS (
         UPDATE outbox SET published_at = now() WHERE id = ANY($1::uuid[]) RETURNING id
       )
       ${BACKLOG} AND NOT (id = ANY($1::uuid[]))`,
      [ids],
    );
    this.metrics.published.inc(rows.length);
    this.setBacklog(backlog[0]);
    return rows.length;
  }

  private async refreshBacklog(client: Client): Promise<void> {
    const { rows } = await client.query<{ backlog: number; lag: number }>(BACKLOG);
    this.setBacklog(rows[0]);
  }

  private setBacklog(row: { backlog: number; lag: number } | undefined): void {
    this.metrics.backlog.set(row?.backlog ?? 0);
    this.metrics.lag.set(row?.lag ?? 0);
  }

  private async disconnect(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.leader = false;
    if (!client) return;
    // Ending the session releases the advisory lock and the LISTEN.
    await client.end().catch(() => undefined);
  }
}

/**
 * Rows grouped by topic, topics in order of first appearance, each topic's rows in their order.
 * Kafka orders messages per partition only, and a key's rows all go to one topic's partition, so
 * a round sent as one call keeps every key's order; a failed call is re-sent whole, in order.
 */
export function groupByTopic<T extends { topic: string }>(
  rows: readonly T[],
): Array<[string, T[]]> {
  const groups = new Map<string, T[]>();
  for (const row of rows) {
    const group = groups.get(row.topic);
    if (group) group.push(row);
    else groups.set(row.topic, [row]);
  }
  return [...groups];
}
