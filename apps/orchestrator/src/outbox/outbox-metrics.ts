import { Counter, Gauge, register } from 'prom-client';

function gauge(name: string, help: string): Gauge {
  return (register.getSingleMetric(name) as Gauge | undefined) ?? new Gauge({ name, help });
}

function counter(name: string, help: string): Counter {
  return (register.getSingleMetric(name) as Counter | undefined) ?? new Counter({ name, help });
}

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
