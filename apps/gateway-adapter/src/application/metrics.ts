import { counterMetric, gaugeMetric, histogramMetric } from '@payments/observability';
import type { Counter, Gauge, Histogram } from 'prom-client';
import type { BreakerState } from '../domain/circuit-breaker';

/** The adapter's metrics in prom-client's default registry (served by ObservabilityModule). */
export interface AdapterMetrics {
  /** Gateway calls made, by operation and outcome kind (accepted, rejected, not-sent, unknown). */
  readonly calls: Counter<'operation' | 'outcome' | 'endpoint'>;
  /** Results published, by operation and kind, including answers given without a call. */
  readonly results: Counter<'operation' | 'kind' | 'source'>;
  readonly callDuration: Histogram<'operation' | 'endpoint'>;
  /** 0 closed, 1 half-open, 2 open. */
  readonly breakerState: Gauge<'endpoint'>;
  /** Requests accepted (handed off) and not yet answered, per endpoint: its lane. */
  readonly laneRequests: Gauge<'endpoint'>;
  /**
   * Status queries admitted or held by the status budget, per endpoint and priority class (urgent,
   * routine, payer, background): the budget's use by class, and who waits when it is the bottleneck.
   */
  readonly statusAdmissions: Counter<'endpoint' | 'priority' | 'outcome'>;
}

export const BREAKER_STATE_VALUE: Readonly<Record<BreakerState, number>> = {
  closed: 0,
  'half-open': 1,
  open: 2,
};

let metrics: AdapterMetrics | undefined;

/** Created once per process (several app instances in one test process share them). */
export function adapterMetrics(): AdapterMetrics {
  metrics ??= {
    calls: counterMetric({
      name: 'gateway_adapter_calls_total',
      help: 'Gateway calls by operation, endpoint and outcome kind',
      labelNames: ['operation', 'outcome', 'endpoint'] as const,
    }),
    results: counterMetric({
      name: 'gateway_adapter_results_total',
      help: 'Gateway results published, by operation and kind; source=adapter when answered without a call',
      labelNames: ['operation', 'kind', 'source'] as const,
    }),
    callDuration: histogramMetric({
      name: 'gateway_adapter_call_duration_seconds',
      help: 'Gateway call latency',
      labelNames: ['operation', 'endpoint'] as const,
      buckets: [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    }),
    breakerState: gaugeMetric({
      name: 'gateway_adapter_breaker_state',
      help: 'Circuit breaker state per endpoint: 0 closed, 1 half-open, 2 open',
      labelNames: ['endpoint'] as const,
    }),
    laneRequests: gaugeMetric({
      name: 'gateway_adapter_lane_requests',
      help: 'Gateway requests accepted and not yet answered (waiting or in flight), per endpoint',
      labelNames: ['endpoint'] as const,
    }),
    statusAdmissions: counterMetric({
      name: 'gateway_adapter_status_admissions_total',
      help: 'Status queries admitted or held by the status budget, per endpoint and priority class',
      labelNames: ['endpoint', 'priority', 'outcome'] as const,
    }),
  };
  return metrics;
}
