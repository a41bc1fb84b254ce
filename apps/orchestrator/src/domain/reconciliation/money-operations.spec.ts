import { GATEWAY_OPERATION_TRAITS, GatewayOperation } from '@payments/contracts';
import { type Expectation, looksForAnotherOrder } from './reconciliation';

/**
 * Reconciliation's money operations are derived from the contracts' per-operation trait
 * (`GATEWAY_OPERATION_TRAITS[…].movesMoney`), never kept as a list of their own: a new operation
 * that moves money gets the paid-twice lookup by its row in contracts alone.
 */
describe("reconciliation's money operations", () => {
  const approved = (operation: string): Expectation => ({
    status: 'settled',
    operation,
    outcome: 'approved',
    clientOrderId: 'c-1',
    gatewayOrderId: '90001',
  });

  it('are exactly the operations whose contract says they move money', () => {
    const looked = GatewayOperation.options.filter((o) =>
      looksForAnotherOrder(approved(o), 'match'),
    );
    const moving = GatewayOperation.options.filter((o) => GATEWAY_OPERATION_TRAITS[o].movesMoney);
    expect(looked).toEqual(moving);
    expect(moving).toEqual(
      expect.arrayContaining(['sale', 'capture', 'rebill', 'payout', 'payout-pay', 'transfer']),
    );
    expect(moving).not.toEqual(expect.arrayContaining(['preauth']));
  });
});
