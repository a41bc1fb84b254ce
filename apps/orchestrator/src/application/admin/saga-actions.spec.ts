import { loadConfig } from '@payments/config';
import type { AdminAction } from '@payments/contracts';
import { SCHEDULE_ID, saleCommand } from '@payments/contracts/testing';
import * as payments from '../../../test/kits/card-payment.kit';
import * as payouts from '../../../test/kits/payout.kit';
import * as schedules from '../../../test/kits/recurring-schedule.kit';
import { orchestratorConfigShape } from '../../config';
import type { AdminPrincipal } from '../../domain/admin/admin-tokens';
import { registeredFlows } from '../../flows/registered-flows';
import { type ActedSaga, SagaActions } from './saga-actions';

// Every payout of the payout kit (EUR, endpoint 1234) is above 1,000 minor units: four eyes.
const config = loadConfig('orchestrator', orchestratorConfigShape, {
  PAYOUT_FOUR_EYES_ABOVE_MINOR: '10000',
});
const actions = new SagaActions(registeredFlows(config));
/** A minute after each kit's start (the payout kit's, the others'): within a payout's window. */
const nowOf = (flow: string) =>
  new Date(flow === 'payout' ? payouts.at(60_000) : '2026-01-01T00:01:00.000Z');

const alice: AdminPrincipal = { name: 'alice', role: 'operator', scope: 'all' };
const bob: AdminPrincipal = { name: 'bob', role: 'approver', scope: 'all' };
const viewer: AdminPrincipal = { name: 'vera', role: 'viewer', scope: 'all' };

/** A saga row as the admin API reads it, from a flow's state (the row's state column is it). */
function row(flow: string, state: unknown, unknownSince: string | null = null): ActedSaga {
  const s = state as Record<string, unknown> & {
    merchant?: { endpointId: string };
    terms?: { merchant: { endpointId: string } };
  };
  const id = (s.paymentId ?? s.payoutId ?? SCHEDULE_ID) as string;
  const endpointId = s.merchant?.endpointId ?? s.terms?.merchant.endpointId ?? '';
  return { id, flow, endpointId, state, unknownSince };
}

const offered = (who: AdminPrincipal, saga: ActedSaga): AdminAction[] =>
  actions.offered(who, saga, nowOf(saga.flow));

const refusal = (who: AdminPrincipal, saga: ActedSaga, action: AdminAction) => {
  const prepared = actions.prepare(who, saga, action, 'why', payouts.uuid(), nowOf(saga.flow));
  return prepared.ok ? 'allowed' : prepared.kind === 'not-allowed' ? prepared.code : prepared.kind;
};

describe('actions by state: what a saga offers now, by its own flow', () => {
  it('a registered payout offers approve and reject; a paid one neither (ACTION_NOT_ALLOWED_IN_STATE)', () => {
    const world = new payouts.PayoutWorld();
    const id = payouts.uuid();
    world.registered(id, 5_000);
    expect(offered(alice, row('payout', world.state(id)))).toEqual(['approve', 'reject']);
    world.apply(id, payouts.command(payouts.approve(id)));
    world.apply(id, (s) => payouts.sendResult(s, { kind: 'accepted', gatewayOrderId: 'G-1' }));
    world.apply(id, (s) => payouts.statusReply(s, { status: 'approved' }, ['payout-pay']));
    const paid = row('payout', world.state(id));
    expect(world.state(id).status).toBe('paid');
    expect(offered(alice, paid)).toEqual([]);
    expect(refusal(alice, paid, 'approve')).toBe('ACTION_NOT_ALLOWED_IN_STATE');
    expect(refusal(alice, paid, 'reject')).toBe('ACTION_NOT_ALLOWED_IN_STATE');
    expect(refusal(alice, paid, 'pause')).toBe('not-applicable');
  });

  it('four eyes: after alice approved, approve is offered to bob (approver), not to alice, who is refused with PAYOUT_SAME_APPROVER', () => {
    const world = new payouts.PayoutWorld({
      ...payouts.POLICY,
      limits: { default: { ...payouts.POLICY.limits.default, fourEyesAboveMinor: 10_000 } },
    });
    const id = payouts.uuid();
    world.registered(id, 20_000);
    world.apply(id, payouts.command({ ...payouts.approve(id, 'alice'), approverRole: 'operator' }));
    const awaiting = row('payout', world.state(id));
    expect(offered(alice, awaiting)).toEqual(['reject']);
    expect(refusal(alice, awaiting, 'approve')).toBe('PAYOUT_SAME_APPROVER');
    expect(offered(bob, awaiting)).toEqual(['approve', 'reject']);
    expect(refusal({ ...alice, name: 'carl' }, awaiting, 'approve')).toBe(
      'PAYOUT_APPROVER_ROLE_REQUIRED',
    );
  });

  it('a viewer is offered nothing', () => {
    const world = new payouts.PayoutWorld();
    const id = payouts.uuid();
    world.registered(id, 5_000);
    expect(offered(viewer, row('payout', world.state(id)))).toEqual([]);
  });

  it('a card payment with an outcome unknown offers refresh and resolve; a settled one nothing', () => {
    const settled = payments.approvedSale().state;
    expect(offered(alice, row('card-payment', settled))).toEqual([]);
    expect(refusal(alice, row('card-payment', settled), 'refresh-status')).toBe(
      'ACTION_NOT_ALLOWED_IN_STATE',
    );
    const inFlight = payments.givenInputs(payments.command(saleCommand())).state;
    expect(offered(alice, row('card-payment', inFlight, '2026-01-01T00:00:30.000Z'))).toEqual([
      'refresh-status',
      'resolve-unknown',
    ]);
    // In flight but not (yet) unknown: a refresh asks, there is nothing to resolve.
    expect(offered(alice, row('card-payment', inFlight))).toEqual(['refresh-status']);
  });

  it('an active schedule offers pause and cancel; a paused one resume and cancel; a cancelled or completed one nothing', () => {
    const active = schedules.givenInputs([schedules.create(), schedules.T0]);
    expect(offered(alice, row('recurring-schedule', active.state))).toEqual(['pause', 'cancel']);
    const paused = active.and(schedules.pause());
    expect(offered(alice, row('recurring-schedule', paused.state))).toEqual(['resume', 'cancel']);
    const cancelled = active.and(schedules.cancel());
    expect(cancelled.state.status).toBe('cancelled');
    expect(offered(alice, row('recurring-schedule', cancelled.state))).toEqual([]);
    expect(refusal(alice, row('recurring-schedule', cancelled.state), 'cancel')).toBe(
      'ACTION_NOT_ALLOWED_IN_STATE',
    );
    const completed = { ...active.state, status: 'completed' };
    expect(offered(alice, row('recurring-schedule', completed))).toEqual([]);
  });
});
