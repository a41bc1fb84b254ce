import {
  Counter,
  type CounterConfiguration,
  Gauge,
  type GaugeConfiguration,
  Histogram,
  type HistogramConfiguration,
  register,
} from 'prom-client';

/**
 * Get-or-create on prom-client's default registry (the one /metrics serves): a metric is created
 * once per process and found again afterwards, so several app instances in one test process, or
 * a module built twice, never register a name twice. Every metric of the project is made here.
 */
export function counterMetric<L extends string>(config: CounterConfiguration<L>): Counter<L> {
  const existing = register.getSingleMetric(config.name);
  return existing ? (existing as Counter<L>) : new Counter(config);
}

export function gaugeMetric<L extends string>(config: GaugeConfiguration<L>): Gauge<L> {
  const existing = register.getSingleMetric(config.name);
  return existing ? (existing as Gauge<L>) : new Gauge(config);
}

export function histogramMetric<L extends string>(config: HistogramConfiguration<L>): Histogram<L> {
  const existing = register.getSingleMetric(config.name);
  return existing ? (existing as Histogram<L>) : new Histogram(config);
}
