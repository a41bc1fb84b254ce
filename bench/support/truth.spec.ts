import {
  bucketsSince,
  quantileBound,
  statusAdmissions,
  statusBudgetLine,
  truthBuckets,
  truthHistogramLine,
} from './truth';

const text = (counts: Record<string, [number, number]>) =>
  Object.entries(counts)
    .flatMap(([le, [reply, callback]]) => [
      `orchestrator_time_to_truth_seconds_bucket{le="${le}",flow="card-payment",operation="sale",source="reply",service="orchestrator"} ${reply}`,
      `orchestrator_time_to_truth_seconds_bucket{le="${le}",flow="card-payment",operation="sale",source="callback",service="orchestrator"} ${callback}`,
      `orchestrator_time_to_truth_seconds_bucket{le="${le}",flow="payout",operation="payout",source="callback",service="orchestrator"} 1000`,
    ])
    .join('\n');

describe("the orchestrator's time-to-truth histogram, read by the benchmark", () => {
  it('sums a flow over operations and sources and tells what a mode added', () => {
    const before = truthBuckets(
      text({ '0.05': [1, 0], '0.1': [2, 0], '+Inf': [2, 0] }),
      'card-payment',
    );
    const after = truthBuckets(
      text({ '0.05': [51, 40], '0.1': [52, 98], '+Inf': [52, 100] }),
      'card-payment',
    );
    expect([...before]).toEqual([
      [0.05, 1],
      [0.1, 2],
      [Infinity, 2],
    ]);
    const gained = bucketsSince(before, after);
    expect([...gained]).toEqual([
      [0.05, 90],
      [0.1, 148],
      [Infinity, 150],
    ]);
    expect(quantileBound(gained, 0.5)).toBe(0.05);
    expect(quantileBound(gained, 0.99)).toBe(Infinity);
    expect(truthHistogramLine('closed loop', gained)).toContain(
      '150 answers: p50 ≤ 50 ms, p99 ≤ +Inf',
    );
  });

  it('has no quantile when nothing was observed', () => {
    expect(quantileBound(new Map(), 0.5)).toBeUndefined();
    expect(quantileBound(new Map([[Infinity, 0]]), 0.5)).toBeUndefined();
  });
});

describe("the adapter's status budget by class (bench:payments)", () => {
  const text = (urgentAdmitted: number, backgroundHeld: number) =>
    [
      '# HELP gateway_adapter_status_admissions_total Status queries admitted or held',
      `gateway_adapter_status_admissions_total{endpoint="1111",priority="urgent",outcome="admitted"} ${urgentAdmitted}`,
      `gateway_adapter_status_admissions_total{endpoint="1112",priority="urgent",outcome="admitted"} 1`,
      `gateway_adapter_status_admissions_total{endpoint="1111",priority="background",outcome="held"} ${backgroundHeld}`,
      'gateway_adapter_status_calls_total{endpoint="1111"} 99',
    ].join('\n');

  it('sums endpoints per class and outcome, and prints what each gained per second', () => {
    const before = statusAdmissions(text(4, 10));
    expect(before.get('urgent/admitted')).toBe(5);
    const after = statusAdmissions(text(24, 50));
    const line = statusBudgetLine('open loop at 25/s', before, after, 10);
    expect(line).toContain('urgent 20 admitted (2.00/s), 0 held (0.00/s)');
    expect(line).toContain('background 0 admitted (0.00/s), 40 held (4.00/s)');
    expect(line).toContain('routine 0 admitted');
  });
});
