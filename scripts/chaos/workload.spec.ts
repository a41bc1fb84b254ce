import { commandsOf, SCENARIOS, type Scenario, summarize } from './workload';

const HELD_TOGETHER = 'preauth → capture and card ref both held back';

function scenario(name: string, next: number): Scenario {
  const shape = SCENARIOS.find((s) => s.name === name);
  if (!shape) throw new Error(`no scenario ${name}`);
  return {
    paymentId: '10000000-0000-4000-8000-000000000001',
    name,
    steps: shape.steps,
    amountMinor: 1_000,
    next,
    ready: false,
    ended: true,
    seenVersion: 0,
    saga: '10000000-0000-4000-8000-000000000001',
    ownSagas: [],
    ownSagasUsed: 0,
  };
}

describe('the workload counts commands, not steps', () => {
  it('a step with a command alongside sends two', () => {
    const shape = SCENARIOS.find((s) => s.name === HELD_TOGETHER);
    expect(shape?.steps.some((s) => s.alongside !== undefined)).toBe(true);
    expect(commandsOf(shape?.steps ?? [])).toBe((shape?.steps.length ?? 0) + 1);
  });

  it('a scenario ended before a step with a command alongside leaves both unsent', () => {
    const ended = scenario(HELD_TOGETHER, 1);
    expect(summarize([ended])[HELD_TOGETHER]).toMatchObject({
      endedEarly: 1,
      unsent: commandsOf(ended.steps.slice(1)),
    });
    expect(commandsOf(ended.steps.slice(1))).toBe(ended.steps.length);
  });
});
