import { EndpointLanes } from './endpoint-lanes';

/** A task that runs until `finish` is called; records when it started. */
function gate(log: string[], name: string) {
  let finish: () => void = () => undefined;
  let fail: (error: Error) => void = () => undefined;
  const task = () =>
    new Promise<void>((resolve, reject) => {
      log.push(`start ${name}`);
      finish = () => {
        log.push(`end ${name}`);
        resolve();
      };
      fail = reject;
    });
  return { task, finish: () => finish(), fail: (error: Error) => fail(error) };
}

const flush = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('EndpointLanes', () => {
  it('runs requests of different keys at once: a slow one holds up nobody', async () => {
    const lanes = new EndpointLanes(() => 10);
    const log: string[] = [];
    const slow = gate(log, 'slow');
    const other = gate(log, 'other');
    lanes.reserve('1213')?.start('saga-a', slow.task);
    lanes.reserve('1113')?.start('saga-b', other.task);
    await flush();
    expect(log).toEqual(['start slow', 'start other']);
    other.finish();
    await flush();
    expect(log).toEqual(['start slow', 'start other', 'end other']);
    expect(lanes.count('1113')).toBe(0);
    expect(lanes.count('1213')).toBe(1);
    slow.finish();
    await flush();
    expect(lanes.total).toBe(0);
  });

  it("runs one key's requests one after another, in the order accepted, also across endpoints", async () => {
    const lanes = new EndpointLanes(() => 10);
    const log: string[] = [];
    const first = gate(log, 'first');
    const second = gate(log, 'second');
    const third = gate(log, 'third');
    lanes.reserve('1213')?.start('saga-a', first.task);
    lanes.reserve('1113')?.start('saga-a', second.task);
    lanes.reserve('1213')?.start('saga-a', third.task);
    await flush();
    expect(log).toEqual(['start first']);
    first.fail(new Error('database down'));
    await flush();
    // A failed task still lets the next one of its key run.
    expect(log).toEqual(['start first', 'start second']);
    second.finish();
    await flush();
    third.finish();
    await flush();
    expect(log).toEqual(['start first', 'start second', 'end second', 'start third', 'end third']);
    expect(lanes.total).toBe(0);
  });

  it("bounds each endpoint's outstanding requests; a finished or cancelled one frees its place", async () => {
    const lanes = new EndpointLanes((endpointId) => (endpointId === '1213' ? 2 : 5));
    const log: string[] = [];
    const a = gate(log, 'a');
    lanes.reserve('1213')?.start('saga-a', a.task);
    const booked = lanes.reserve('1213');
    expect(booked).toBeDefined();
    expect(lanes.reserve('1213')).toBeUndefined();
    // Another endpoint has its own bound.
    expect(lanes.reserve('1113')).toBeDefined();
    booked?.cancel();
    const again = lanes.reserve('1213');
    expect(again).toBeDefined();
    expect(lanes.reserve('1213')).toBeUndefined();
    await flush();
    a.finish();
    await flush();
    expect(lanes.count('1213')).toBe(1);
    expect(lanes.reserve('1213')).toBeDefined();
    expect(() => again?.cancel()).not.toThrow();
    expect(() => again?.cancel()).toThrow('a lane ticket is used once');
  });

  it('reports each change of an endpoint count', async () => {
    const seen: string[] = [];
    const lanes = new EndpointLanes(
      () => 10,
      (endpointId, count) => seen.push(`${endpointId}=${count}`),
    );
    const log: string[] = [];
    const a = gate(log, 'a');
    lanes.reserve('1213')?.start('saga-a', a.task);
    lanes.reserve('1213')?.cancel();
    await flush();
    a.finish();
    await flush();
    expect(seen).toEqual(['1213=1', '1213=2', '1213=1', '1213=0']);
  });

  it('whenIdle resolves once every accepted request finished', async () => {
    const lanes = new EndpointLanes(() => 10);
    await expect(lanes.whenIdle()).resolves.toBeUndefined();
    const log: string[] = [];
    const a = gate(log, 'a');
    lanes.reserve('1213')?.start('saga-a', a.task);
    let idle = false;
    void lanes.whenIdle().then(() => {
      idle = true;
    });
    await flush();
    expect(idle).toBe(false);
    a.finish();
    await flush();
    expect(idle).toBe(true);
  });
});
