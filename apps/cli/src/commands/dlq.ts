import { SingleBar, Presets } from 'cli-progress';
import { type Kafka, Partitioners } from 'kafkajs';
import { sleep } from '@payments/core';
import { IdempotentSender } from '@payments/kafka/idempotent-sender';
import {
  type DeadLetter,
  type DeadLetterFilter,
  type DeadLetterRecord,
  describeDeadLetter,
  matches,
  replayOf,
} from '@payments/kafka/dead-letters';
import { slotFor } from '../domain/pace';
import {
  deadLetterRecordOf,
  existingDeadLetterTopics,
  readToEnd,
} from '@payments/kafka/read-to-end';
import { UsageError } from './errors';
import { type CommonOptions, kafkaOf } from './options';

export interface DlqOptions extends CommonOptions {
  readonly topic?: string[];
  readonly reason?: string[];
  readonly originalTopic?: string[];
  readonly key?: RegExp;
  readonly since?: Date;
  readonly max?: number;
  readonly json?: boolean;
}

export interface ReplayOptions extends DlqOptions {
  readonly dryRun?: boolean;
  /** Records per second at most (default 50). */
  readonly rate?: number;
  /** Show a progress bar on stderr (default: when stderr is a terminal). */
  readonly progress?: boolean;
}

export interface ReplaySummary {
  readonly examined: number;
  readonly selected: number;
  readonly replayed: number;
  readonly refused: number;
  readonly failed: number;
  readonly dryRun: boolean;
}

function filterOf(options: DlqOptions): DeadLetterFilter {
  return {
    ...(options.reason ? { reasons: options.reason } : {}),
    ...(options.originalTopic ? { originalTopics: options.originalTopic } : {}),
    ...(options.key ? { key: options.key } : {}),
    ...(options.since ? { since: options.since } : {}),
  };
}

/** The dead-letter topics that exist, or the ones named (each must exist). */
async function deadLetterTopics(kafka: Kafka, named: readonly string[]): Promise<string[]> {
  if (named.length === 0) return existingDeadLetterTopics(kafka);
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = await admin.listTopics();
    const missing = named.filter((t) => !existing.includes(t));
    if (missing.length > 0) throw new UsageError(`no such topic: ${missing.join(', ')}`);
    return [...named];
  } finally {
    await admin.disconnect();
  }
}

function letterLine(l: DeadLetter): string {
  const from =
    l.originalTopic === undefined
      ? 'unknown origin'
      : `${l.originalTopic}/${l.originalPartition}/${l.originalOffset}`;
  const replayed = l.replayedFrom === undefined ? '' : `  replayed-from=${l.replayedFrom}`;
  return `${l.at}  ${l.time}  ${l.reason}  from=${from}  key=${l.key ?? '-'}  ${l.bytes} bytes${replayed}  ${l.error}`;
}

async function selected(
  options: DlqOptions,
  each: (record: DeadLetterRecord, letter: DeadLetter) => Promise<void> | void,
): Promise<{ examined: number; selected: number; topics: string[] }> {
  const kafka = kafkaOf(options);
  const topics = await deadLetterTopics(kafka, options.topic ?? []);
  const filter = filterOf(options);
  let chosen = 0;
  const examined = await readToEnd(kafka, topics, async (m) => {
    const record = deadLetterRecordOf(m);
    const letter = describeDeadLetter(record);
    if (!matches(letter, filter)) return;
    if (options.max !== undefined && chosen >= options.max) return;
    chosen++;
    await each(record, letter);
  });
  return { examined, selected: chosen, topics };
}

/** `payments dlq list`: the dead letters on every `*.dlq` topic (or those named), filtered. */
export async function listDeadLetters(
  options: DlqOptions,
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<number> {
  const {
    examined,
    selected: count,
    topics,
  } = await selected(options, (_record, letter) =>
    out(options.json === true ? JSON.stringify(letter) : letterLine(letter)),
  );
  err(
    `${count} of ${examined} dead letters on ${topics.length} topic(s) (${topics.join(', ') || 'none'})`,
  );
  return count;
}

/**
 * `payments dlq replay`: each selected dead letter produced again to its original topic (key and
 * value as stored, original headers, `dlq-replayed-from` naming the dead letter), at most `rate`
 * per second, with a progress bar and a summary. --dry-run lists what would go and sends nothing.
 * Consumers de-duplicate by ce_id, so replaying a record twice is harmless; a record whose card data
 * was masked when it was dead-lettered fails again, by design.
 */
export async function replayDeadLetters(
  options: ReplayOptions,
  out: (line: string) => void,
  err: (line: string) => void,
): Promise<ReplaySummary> {
  const dryRun = options.dryRun === true;
  const rate = options.rate ?? 50;
  // First pass: what is selected (so the progress bar knows its total and nothing half-sends on a bad filter).
  const plan: Array<{ record: DeadLetterRecord; letter: DeadLetter }> = [];
  const { examined } = await selected(
    options,
    (record, letter) => void plan.push({ record, letter }),
  );
  const kafka = kafkaOf(options);
  const sender = dryRun
    ? undefined
    : new IdempotentSender(() =>
        kafka.producer({
          idempotent: true,
          maxInFlightRequests: 1,
          createPartitioner: Partitioners.DefaultPartitioner,
        }),
      );
  const showBar = !dryRun && plan.length > 0 && (options.progress ?? process.stderr.isTTY === true);
  const bar = showBar
    ? new SingleBar(
        { stream: process.stderr, format: 'replay [{bar}] {value}/{total} {eta_formatted} left' },
        Presets.shades_classic,
      )
    : undefined;
  bar?.start(plan.length, 0);
  let replayed = 0;
  let refused = 0;
  let failed = 0;
  const startedAt = Date.now();
  try {
    for (const [n, { record, letter }] of plan.entries()) {
      const replay = replayOf(record);
      if ('refused' in replay) {
        refused++;
        err(`refused ${letter.at}: ${replay.refused}`);
        bar?.increment();
        continue;
      }
      if (dryRun) {
        out(
          JSON.stringify({
            wouldReplay: letter.at,
            to: replay.topic,
            key: letter.key,
            reason: letter.reason,
          }),
        );
        continue;
      }
      const wait = slotFor(n, rate, startedAt) - Date.now();
      if (wait > 0) await sleep(wait);
      try {
        await sender!.send(
          replay.topic,
          [{ key: replay.key, value: replay.value, headers: replay.headers }],
          30_000,
        );
        replayed++;
        out(JSON.stringify({ replayed: letter.at, to: replay.topic, key: letter.key }));
      } catch (error) {
        failed++;
        err(
          `failed ${letter.at} (outcome unknown; replaying it again is safe): ${(error as Error).message}`,
        );
      }
      bar?.increment();
    }
  } finally {
    bar?.stop();
    await sender?.close().catch(() => undefined);
  }
  const summary: ReplaySummary = {
    examined,
    selected: plan.length,
    replayed,
    refused,
    failed,
    dryRun,
  };
  err(
    dryRun
      ? `dry run: ${plan.length} of ${examined} dead letters would be replayed (${refused} cannot be), nothing sent`
      : `replayed ${replayed} of ${plan.length} selected (${examined} examined); refused ${refused}; failed ${failed}; ${((Date.now() - startedAt) / 1000).toFixed(1)} s`,
  );
  return summary;
}
