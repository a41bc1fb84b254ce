import type { DeadLetterPage } from '../../application/admin-api.client';
import { deadLettersPage } from './dead-letters';

const page: DeadLetterPage = {
  topics: ['payments.commands.v1.dlq'],
  total: 1,
  items: [
    {
      at: 'payments.commands.v1.dlq/0/3',
      time: '2026-11-27T12:00:00.000Z',
      key: '<script>k</script>',
      reason: 'parse',
      error: 'Unexpected end of JSON input',
      originalTopic: 'payments.commands.v1',
      bytes: 12,
    },
  ],
};

describe('deadLettersPage', () => {
  it('offers a replay to an operator only', () => {
    const operator = deadLettersPage(page, { name: 'olga', role: 'operator', token: 't' }).text;
    const viewer = deadLettersPage(page, { name: 'vic', role: 'viewer', token: 't' }).text;
    expect(operator).toContain('href="/dead-letters/replay?at=payments.commands.v1.dlq%2F0%2F3"');
    expect(viewer).not.toContain('/dead-letters/replay');
    expect(viewer).toContain('parse');
  });

  it('escapes what the record carries', () => {
    const text = deadLettersPage(page, { name: 'vic', role: 'viewer', token: 't' }).text;
    expect(text).not.toContain('<script>k');
    expect(text).toContain('&lt;script&gt;k');
  });
});
