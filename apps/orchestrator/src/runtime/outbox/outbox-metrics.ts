import { counterMetric, gaugeMetric } from '@payments/observability';
import type { Counter, Gauge } from 'prom-client';

const gauge = (name: string, help: string): Gauge => gaugeMetric({ name, help });
const counter = (name: string, help: string): Counter => counterMetric({ name, help });

/** Outbox relay metrics (process-wide; shared by several app instances in one test process). */
export function outboxMetrics(): {
  backlog: Gauge;
  lag: Gauge;
  published: Counter;
  failures: Counter;
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
  };
}
