import { parseDeadLetterAt } from './dead-letter.service';

describe('parseDeadLetterAt', () => {
  it('reads <dlq topic>/<partition>/<offset>', () => {
    expect(parseDeadLetterAt('payments.commands.v1.dlq/2/17')).toEqual({
      topic: 'payments.commands.v1.dlq',
      partition: 2,
      offset: '17',
    });
  });

  it.each([
    'payments.commands.v1/2/17', // not a dead-letter topic: nothing outside *.dlq is replayed
    'payments.commands.v1.dlq/2',
    'payments.commands.v1.dlq/x/17',
    'payments.commands.v1.dlq/2/-1',
    '../x.dlq/0/0',
    '',
  ])('refuses %j', (at) => {
    expect(parseDeadLetterAt(at)).toBeUndefined();
  });
});
