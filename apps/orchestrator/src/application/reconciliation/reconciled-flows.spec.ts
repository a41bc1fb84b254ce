import { PaymentEvent, PayoutEvent, ScheduleEvent, TransferEvent } from '@payments/contracts';
import { RECONCILED_FLOWS, reconciliationOf } from './reconciled-flows';

describe('reconciliation covers the flows that move money', () => {
  it('the flows that move money are reconciled: card payments, payouts, transfers, schedules', () => {
    expect([...RECONCILED_FLOWS].sort()).toEqual(
      ['card-payment', 'payout', 'recurring-schedule', 'transfer'].sort(),
    );
  });
});

describe('reconciliation reads events the flows really write', () => {
  // The flows' event unions in the contracts: a renamed event must not leave reconciliation
  // reading nothing (it would fall back to the latest-operation check without a word).
  const written: Record<string, readonly string[]> = {
    'card-payment': PaymentEvent.options.map((o) => o.shape.type.value),
    payout: PayoutEvent.options.map((o) => o.shape.type.value),
    transfer: TransferEvent.options.map((o) => o.shape.type.value),
    'recurring-schedule': ScheduleEvent.options.map((o) => o.shape.type.value),
  };

  it.each(RECONCILED_FLOWS)(
    '%s: every history event it reads is one of its contract events',
    (flow) => {
      const reads = reconciliationOf(flow)?.historyEvents ?? [];
      expect(reads.length).toBeGreaterThan(0);
      expect(reads.filter((type) => !(written[flow] ?? []).includes(type))).toEqual([]);
    },
  );
});
