import * as checks from '../../../../test/kits/pan-eligibility.kit';
import * as payouts from '../../../../test/kits/payout.kit';

describe('pan-eligibility (v2 pan-eligibility/send by card reference)', () => {
  it('sends the card reference once; an approved answer is eligible', () => {
    const id = payouts.uuid();
    const w = checks.panEligibilityWorld();
    w.when(checks.panEligibility(id)).thenEffectsEqual([
      {
        type: 'send-gateway-request',
        request: expect.objectContaining({
          operation: 'pan-eligibility',
          clientOrderId: id,
          cardRefId: '123456',
        }),
      },
    ]);
    w.when(
      checks.eligibilityAnswer({
        kind: 'accepted',
        gatewayOrderId: 'P-1',
        report: { status: 'approved', gatewayOrderId: 'P-1' },
      }),
    )
      .then([
        { type: 'pan-eligibility-accepted-by-gateway' },
        { type: 'pan-eligibility-answered', eligible: true, gatewayOrderId: 'P-1' },
      ])
      .thenStatus('eligible');
  });

  it('a declined answer is not eligible, with the gateway code; a check id used twice is refused', () => {
    const id = payouts.uuid();
    const w = checks.panEligibilityWorld().given(checks.panEligibility(id));
    w.when(
      checks.eligibilityAnswer({
        kind: 'accepted',
        report: { status: 'declined', errorCode: '119', errorMessage: 'not permitted' },
      }),
    ).thenStatus('not-eligible');
    expect(w.types().at(-1)).toBe('pan-eligibility-answered');
    w.when(checks.panEligibility(id)).thenRejected('CHECK_ALREADY_EXISTS');
  });

  it('an unknown outcome stays a check in flight (no answer is invented)', () => {
    const w = checks.panEligibilityWorld().given(checks.panEligibility(payouts.uuid()));
    w.when(checks.eligibilityAnswer({ kind: 'unknown', reason: 'timeout' })).thenStatus('checking');
    expect(w.types()).toEqual(['pan-eligibility-requested', 'pan-eligibility-outcome-unknown']);
  });
});
