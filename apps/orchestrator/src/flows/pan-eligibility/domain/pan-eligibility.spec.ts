import type { GatewayClassification, PanEligibilityEvent } from '@payments/contracts';
import { idSequence, T0 } from '../../../../test/kits/card-payment.kit';
import { POLICY, uuid } from '../../../../test/kits/payout.kit';
import { decideCheck } from './decide';
import { evolveCheck } from './evolve';
import { type CheckInput, type CheckState, initialCheckState } from './model';

function world() {
  const ids = idSequence(9000);
  const events: PanEligibilityEvent[] = [];
  const state = (): CheckState => events.reduce(evolveCheck, initialCheckState);
  return {
    state,
    types: () => events.map((e) => e.type),
    apply(input: CheckInput | ((s: CheckState) => CheckInput)) {
      const before = state();
      const resolved = typeof input === 'function' ? input(before) : input;
      const decision = decideCheck(resolved, before, { now: T0, ids, policy: POLICY });
      if (decision.outcome !== 'rejected') events.push(...decision.events);
      return decision;
    },
  };
}

const check = (checkId: string): CheckInput => ({
  kind: 'command',
  command: {
    type: 'pan-eligibility',
    commandId: uuid(),
    checkId,
    merchant: { endpointId: '1234' },
    occurredAt: T0,
    cardRefId: '123456',
  },
});

function reply(state: CheckState, result: GatewayClassification): CheckInput {
  const op = state.status === 'initial' ? undefined : state.inFlight;
  return {
    kind: 'gateway-result',
    result: {
      requestId: op?.requestId ?? uuid(),
      paymentId: state.status === 'initial' ? uuid() : state.checkId,
      operation: 'pan-eligibility',
      attempt: 1,
      result,
      completedAt: T0,
    },
  };
}

describe('pan-eligibility (v2 pan-eligibility/send by card reference)', () => {
  it('sends the card reference once; an approved answer is eligible', () => {
    const w = world();
    const id = uuid();
    const sent = w.apply(check(id));
    expect(sent.effects).toEqual([
      {
        type: 'send-gateway-request',
        request: expect.objectContaining({
          operation: 'pan-eligibility',
          clientOrderId: id,
          cardRefId: '123456',
        }),
      },
    ]);
    const answered = w.apply((s) =>
      reply(s, {
        kind: 'accepted',
        gatewayOrderId: 'P-1',
        report: { status: 'approved', gatewayOrderId: 'P-1' },
      }),
    );
    expect(answered.events).toMatchObject([
      { type: 'pan-eligibility-accepted-by-gateway' },
      { type: 'pan-eligibility-answered', eligible: true, gatewayOrderId: 'P-1' },
    ]);
    expect(w.state().status).toBe('eligible');
  });

  it('a declined answer is not eligible, with the gateway code; a check id used twice is refused', () => {
    const w = world();
    const id = uuid();
    w.apply(check(id));
    w.apply((s) =>
      reply(s, {
        kind: 'accepted',
        report: { status: 'declined', errorCode: '119', errorMessage: 'not permitted' },
      }),
    );
    expect(w.state().status).toBe('not-eligible');
    expect(w.types().at(-1)).toBe('pan-eligibility-answered');
    const again = w.apply(check(id));
    expect(again.outcome === 'rejected' && again.rejection.code).toBe('CHECK_ALREADY_EXISTS');
  });

  it('an unknown outcome stays a check in flight (no answer is invented)', () => {
    const w = world();
    const id = uuid();
    w.apply(check(id));
    w.apply((s) => reply(s, { kind: 'unknown', reason: 'timeout' }));
    expect(w.state().status).toBe('checking');
    expect(w.types()).toEqual(['pan-eligibility-requested', 'pan-eligibility-outcome-unknown']);
  });
});
