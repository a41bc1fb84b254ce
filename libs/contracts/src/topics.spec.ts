import { ALL_TOPICS, dlqTopic, isDlqTopic, TOPICS } from './topics';

describe('topics', () => {
  it('are versioned and distinct', () => {
    for (const t of ALL_TOPICS) expect(t).toMatch(/^payments\.[a-z.]+\.v\d+$/);
    expect(new Set(ALL_TOPICS).size).toBe(ALL_TOPICS.length);
  });

  it('dead-letter names append .dlq once', () => {
    expect(dlqTopic(TOPICS.commands)).toBe('payments.commands.v1.dlq');
    expect(isDlqTopic(dlqTopic(TOPICS.events))).toBe(true);
    expect(() => dlqTopic('payments.commands.v1.dlq')).toThrow();
  });
});
