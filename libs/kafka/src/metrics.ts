import { counterMetric, gaugeMetric } from '@payments/observability';
import type { Counter, Gauge } from 'prom-client';

/**
 * Consumer metrics on prom-client's default registry (the one /metrics serves), labelled by
 * consumer group and topic. Created once per process and shared by every consumer runner, so
 * several runners (or several Nest apps in one test process) never register a name twice.
 */
export const KAFKA_METRIC = {
  handled: 'kafka_consumer_messages_handled_total',
  failed: 'kafka_consumer_handler_failures_total',
  deadLettered: 'kafka_consumer_messages_dead_lettered_total',
  batches: 'kafka_consumer_batches_handled_total',
  batchFallbacks: 'kafka_consumer_batch_fallbacks_total',
  lag: 'kafka_consumer_lag',
} as const;

export interface KafkaConsumerMetrics {
  readonly handled: Counter<'group' | 'topic'>;
  readonly failed: Counter<'group' | 'topic'>;
  readonly deadLettered: Counter<'group' | 'topic' | 'reason'>;
  readonly batches: Counter<'group' | 'topic'>;
  readonly batchFallbacks: Counter<'group' | 'topic'>;
  readonly lag: Gauge<'group' | 'topic'>;
}

function counter<L extends string>(name: string, help: string, labelNames: L[]): Counter<L> {
  return counterMetric({ name, help, labelNames });
}

function gauge<L extends string>(name: string, help: string, labelNames: L[]): Gauge<L> {
  return gaugeMetric({ name, help, labelNames });
}

export function kafkaConsumerMetrics(): KafkaConsumerMetrics {
  return {
    handled: counter(
      KAFKA_METRIC.handled,
      'Messages whose handler returned normally (then committed).',
      ['group', 'topic'],
    ),
    failed: counter(KAFKA_METRIC.failed, 'Handler attempts that threw (each retry counts).', [
      'group',
      'topic',
    ]),
    deadLettered: counter(
      KAFKA_METRIC.deadLettered,
      'Messages written to <topic>.dlq, by reason (parse, schema, non-retriable, retries-exhausted).',
      ['group', 'topic', 'reason'],
    ),
    batches: counter(
      KAFKA_METRIC.batches,
      'handleBatch calls that returned (their messages then committed at once).',
      ['group', 'topic'],
    ),
    batchFallbacks: counter(
      KAFKA_METRIC.batchFallbacks,
      'Batches that did not decode or whose handleBatch threw: their messages went one by one.',
      ['group', 'topic'],
    ),
    lag: gauge(
      KAFKA_METRIC.lag,
      'Messages not yet committed by the group: high watermark minus committed offset, summed over partitions.',
      ['group', 'topic'],
    ),
  };
}
