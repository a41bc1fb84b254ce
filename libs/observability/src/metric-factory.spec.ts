import { register } from 'prom-client';
import { counterMetric, gaugeMetric, histogramMetric } from './metric-factory';

describe('metric get-or-create', () => {
  afterEach(() => {
    for (const name of ['t_factory_total', 't_factory_gauge', 't_factory_seconds'])
      register.removeSingleMetric(name);
  });

  it('creates a metric once and returns the same one afterwards (no duplicate registration)', () => {
    const a = counterMetric({ name: 't_factory_total', help: 'h', labelNames: ['x'] });
    const b = counterMetric({ name: 't_factory_total', help: 'h', labelNames: ['x'] });
    expect(b).toBe(a);
    a.inc({ x: '1' });
    expect(gaugeMetric({ name: 't_factory_gauge', help: 'h' })).toBe(
      gaugeMetric({ name: 't_factory_gauge', help: 'h' }),
    );
    const h = histogramMetric({ name: 't_factory_seconds', help: 'h', buckets: [1] });
    expect(histogramMetric({ name: 't_factory_seconds', help: 'h' })).toBe(h);
    expect(register.getSingleMetric('t_factory_total')).toBe(a);
  });
});
