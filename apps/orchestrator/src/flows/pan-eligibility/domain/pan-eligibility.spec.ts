import {
  eligibilityAnswer,
  panEligibility,
  panEligibilityWorld,
} from '../../../../test/kits/pan-eligibility.kit';
import { uuid } from '../../../../test/kits/payout.kit';

describe('pan-eligibility (v2 pan-eligibility/send by card reference)', () => {
  it('sends the card reference once; an approved answer is eligible', () => {
    const id = uuid();
    const w = panEligibilityWorld();
    w.when(panEligibility(id)).thenEffectsEqual([
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
      eligibilityAnswer({
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
    const id = uuid();
    const w = panEligibilityWorld().given(panEligibility(id));
    w.when(
      eligibilityAnswer({
        kind: 'accepted',
        report: { status: 'declined', errorCode: '119', errorMessage: 'not permitted' },
      }),
    ).thenStatus('not-eligible');
    expect(w.types().at(-1)).toBe('pan-eligibility-answered');
    w.when(panEligibility(id)).thenRejected('CHECK_ALREADY_EXISTS');
  });

  it('an unknown outcome stays a check in flight (no answer is invented)', () => {
    const w = panEligibilityWorld().given(panEligibility(uuid()));
    w.when(eligibilityAnswer({ kind: 'unknown', reason: 'timeout' })).thenStatus('checking');
    expect(w.types()).toEqual(['pan-eligibility-requested', 'pan-eligibility-outcome-unknown']);
  });
});
