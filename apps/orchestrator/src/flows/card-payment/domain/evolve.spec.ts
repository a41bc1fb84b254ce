import { saleCommand } from '@payments/contracts/testing';
import { DomainError } from '../../../domain/domain-error';
import { evolve } from './evolve';
import { initialState } from './state';
import * as payments from '../../../../test/kits/card-payment.kit';

describe('evolve', () => {
  it('folds version by version and refuses a gap', () => {
    const [requested] = payments.givenInputs(payments.command(saleCommand())).events;
    expect(evolve(initialState, requested).version).toBe(1);
    expect(() => evolve(initialState, { ...requested, version: 3 })).toThrow(DomainError);
  });

  it('refuses an outcome before the payment exists', () => {
    const [requested] = payments.givenInputs(payments.command(saleCommand())).events;
    const approved = {
      type: 'approved' as const,
      paymentId: requested.paymentId,
      commandId: requested.commandId,
      version: 1,
      occurredAt: requested.occurredAt,
      requestId: requested.commandId,
      amount: { minor: 1, currency: 'EUR' },
    };
    expect(() => evolve(initialState, approved)).toThrow(
      expect.objectContaining({ code: 'EVENT_BEFORE_CREATION' }),
    );
  });
});
