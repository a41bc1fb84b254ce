import { counterMetric, histogramMetric } from '@payments/observability';
import type { Counter, Histogram } from 'prom-client';

/**
 * callback-ingest's metrics on the default registry (the one /metrics serves). Looked up before
 * they are created, so several app instances in one test process share them.
 */
export const CALLBACK_METRIC = {
  received: 'callbacks_received_total',
  verified: 'callbacks_verified_total',
  rejected: 'callbacks_rejected_total',
  published: 'callbacks_published_total',
  publishFailed: 'callbacks_publish_failures_total',
  publishSeconds: 'callbacks_publish_duration_seconds',
  hintsSuppressed: 'callbacks_hints_suppressed_total',
} as const;

export interface CallbackMetrics {
  readonly received: Counter<'source'>;
  readonly verified: Counter<'source'>;
  readonly rejected: Counter<'reason'>;
  readonly published: Counter<'kind' | 'source'>;
  readonly publishFailed: Counter<'kind'>;
  readonly publishSeconds: Histogram<'kind' | 'outcome'>;
  readonly hintsSuppressed: Counter<'why'>;
}

function counter<L extends string>(name: string, help: string, labelNames: L[]): Counter<L> {
  return counterMetric({ name, help, labelNames });
}

function histogram<L extends string>(name: string, help: string, labelNames: L[]): Histogram<L> {
  return histogramMetric({
    name,
    help,
    labelNames,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  });
}

export function callbackMetrics(): CallbackMetrics {
  return {
    received: counter(CALLBACK_METRIC.received, 'Callbacks and browser returns received.', [
      'source',
    ]),
    verified: counter(CALLBACK_METRIC.verified, 'Notifications whose control verified.', [
      'source',
    ]),
    rejected: counter(
      CALLBACK_METRIC.rejected,
      'Notifications refused, by reason (unknown-endpoint, missing-control, checksum-mismatch, malformed-callback, unknown-merchant-order, too-many-parameters, payload-too-large, uri-too-long, unsupported-media-type).',
      ['reason'],
    ),
    published: counter(
      CALLBACK_METRIC.published,
      'Messages acknowledged by the broker on payments.gateway.callbacks.v1 (kind command: a 3-D Secure hand-back on payments.commands.v1), by kind.',
      ['kind', 'source'],
    ),
    publishFailed: counter(
      CALLBACK_METRIC.publishFailed,
      'Publishes not acknowledged (broker unreachable or timeout), by kind.',
      ['kind'],
    ),
    publishSeconds: histogram(
      CALLBACK_METRIC.publishSeconds,
      'Time from send to broker acknowledgement (or failure).',
      ['kind', 'outcome'],
    ),
    hintsSuppressed: counter(
      CALLBACK_METRIC.hintsSuppressed,
      'Status-check hints not sent: rate-limited (one per payment per window) or limiter full.',
      ['why'],
    ),
  };
}
