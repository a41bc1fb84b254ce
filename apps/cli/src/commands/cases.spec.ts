import { caseLine, proposalOf } from './cases';
import { UsageError } from './errors';

describe('payments cases', () => {
  it('a proposal names its decision and reason; "done" its amount in minor units and currency', () => {
    expect(proposalOf({ decision: 'not-done', reason: 'no refund at the bank' })).toEqual({
      decision: 'not-done',
      reason: 'no refund at the bank',
    });
    expect(
      proposalOf({ decision: 'done', amount: '9000', currency: 'EUR', reason: 'gateway says so' }),
    ).toEqual({
      decision: 'done',
      amount: { minor: 9000, currency: 'EUR' },
      reason: 'gateway says so',
    });
    expect(() => proposalOf({ decision: 'done', reason: 'r' })).toThrow(UsageError);
    expect(() =>
      proposalOf({ decision: 'done', amount: '90.5', currency: 'EUR', reason: 'r' }),
    ).toThrow(UsageError);
    expect(() => proposalOf({ decision: 'not-done' })).toThrow(UsageError);
    expect(() => proposalOf({ decision: 'maybe', reason: 'r' })).toThrow(UsageError);
  });

  it('lists a case by id, status, concern, operation, amounts and who decided', () => {
    expect(
      caseLine({
        caseId: 'c-1',
        flow: 'card-payment',
        sagaId: 's-1',
        operation: 'return',
        concern: 'no-trace',
        status: 'closed',
        requestedAmount: { minor: 2000, currency: 'EUR' },
        decided: { proposal: { decision: 'not-done' }, by: 'alice', approvedBy: 'bob' },
      }),
    ).toBe(
      'c-1  closed  no-trace  card-payment return  saga s-1  requested 2000 EUR  reported -  decided not-done by alice, approved by bob',
    );
  });
});
