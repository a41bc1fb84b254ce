import { ConcurrencyGauge } from './concurrency';

describe('ConcurrencyGauge', () => {
  it('counts requests in flight per endpoint and keeps the peak until a reset', () => {
    const gauge = new ConcurrencyGauge();
    const a1 = gauge.enter('1113');
    const a2 = gauge.enter('1113');
    const b1 = gauge.enter('1213');
    expect(gauge.view()).toEqual({
      '1113': { inFlight: 2, peak: 2 },
      '1213': { inFlight: 1, peak: 1 },
    });
    a1();
    a1(); // counted out once only
    b1();
    expect(gauge.view()).toEqual({
      '1113': { inFlight: 1, peak: 2 },
      '1213': { inFlight: 0, peak: 1 },
    });
    gauge.reset();
    expect(gauge.view()).toEqual({ '1113': { inFlight: 1, peak: 1 } });
    a2();
    expect(gauge.view()).toEqual({ '1113': { inFlight: 0, peak: 1 } });
  });
});
