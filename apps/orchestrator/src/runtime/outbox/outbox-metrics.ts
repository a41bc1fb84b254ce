import { counterMetric, gaugeMetric, histogramMetric } from '@payments/observability';
import type { Counter, Gauge, Histogram } from 'prom-client';

const gauge = (name: string, help: string): Gauge => gaugeMetric({ name, help });
const counter = (name: string, help: string): Counter => counterMetric({ name, help });

/** Outbox relay metrics (process-wide; shared by several app instances in one test process). */
export function outboxMetrics(): {
  backlog: Gauge;
  lag: Gauge;
  published: Counter;
  failures: Counter;
  roundSeconds: Histogram<'outcome'>;
} {
  return {
    backlog: gauge('orchestrator_outbox_backlog', 'Outbox rows not yet published'),
    lag: gauge(
      'orchestrator_outbox_lag_seconds',
      'Age of the oldest unpublished outbox row, in seconds (0 when none)',
    ),
    published: counter('orchestrator_outbox_published_total', 'Outbox rows published'),
    failures: counter(
      'orchestrator_outbox_publish_failures_total',
      'Failed publication rounds of the outbox relay',
    ),
    // The leader's round: select a batch, one produce call (acks=all), stamp it; outcome
    // published (rows went out), empty (nothing to publish) or failed (re-run). Its time bounds
    // the rate one relay can publish (rows per round / round time): docs/capacity.md.
    roundSeconds: histogramMetric({
      name: 'orchestrator_outbox_round_seconds',
      help: "Duration of the leading outbox relay's rounds (select, produce, stamp), by outcome",
      labelNames: ['outcome'] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    }),
  };
}
