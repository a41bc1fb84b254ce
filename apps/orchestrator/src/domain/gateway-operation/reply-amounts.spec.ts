import { readFileSync } from 'node:fs';
import path from 'node:path';
import { answerNamesAmount, OPERATIONS_NAMING_THEIR_AMOUNT } from './reply-amounts';

describe('which answers name an operation amount (reply-amounts.ts)', () => {
  it('a status reply or callback about an opening money operation names it; a send reply never', () => {
    for (const operation of ['sale', 'preauth', 'rebill', 'payout', 'transfer']) {
      expect(answerNamesAmount(operation, 'status-reply')).toBe(true);
      expect(answerNamesAmount(operation, 'callback')).toBe(true);
      expect(answerNamesAmount(operation, 'send-reply')).toBe(false);
    }
    // A follow-up's answers carry the order's initial amount; a verification none.
    expect(answerNamesAmount('capture', 'status-reply')).toBe(false);
    expect(answerNamesAmount('account-verification', 'callback')).toBe(false);
    // An operation the table does not know is held to it (fail closed).
    expect(answerNamesAmount('some-new-operation', 'status-reply')).toBe(true);
  });

  it("the README's Truth about money table names exactly these operations", () => {
    const readme = readFileSync(path.join(__dirname, '../../../../../README.md'), 'utf8');
    const row = readme.split('\n').find((line) => line.startsWith('| amounts |')) ?? '';
    const named = /Status replies and callbacks name the amount of ([^;]+);/.exec(row)?.[1] ?? '';
    const listed = named
      .replace(/\(([^)]*)\)/g, ', $1')
      .split(/,| and /)
      .map((s) => s.trim().replace(/^the hosted forms$/, ''))
      .filter((s) => s !== '');
    expect([...listed].sort()).toEqual([...OPERATIONS_NAMING_THEIR_AMOUNT].sort());
  });
});
