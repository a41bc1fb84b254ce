import type { ReconciliationMismatch } from '@payments/contracts';
import { mismatchLine } from './reconcile';

const base: ReconciliationMismatch = {
  type: 'reconciliation-mismatch',
  runId: '0d3f8a7e-9c0b-4f11-8a57-1b2c3d4e5f60',
  sagaId: '6f1c1a43-7b8f-4a57-9d7c-2d7a3b0c8e11',
  flow: 'card-payment',
  endpointId: '1113',
  kind: 'reported-charged-but-not',
  ours: { status: 'approved', operation: 'sale', amount: { minor: 4200, currency: 'USD' } },
  gateway: { status: 'declined', transactionType: 'sale' },
  detectedAt: '2026-11-26T12:00:00.000Z',
};

describe('mismatchLine', () => {
  it('names the kind, the saga, what we reported and what the gateway says', () => {
    expect(mismatchLine(base)).toBe(
      'reported-charged-but-not card-payment 6f1c1a43-7b8f-4a57-9d7c-2d7a3b0c8e11 endpoint=1113 ours=approved/sale 4200 USD gateway=declined/sale',
    );
  });

  it('says so when the gateway gave no answer', () => {
    const { gateway: _none, ...unanswered } = base;
    expect(mismatchLine({ ...unanswered, kind: 'unresolved' })).toMatch(/gateway=no answer$/);
  });
});
