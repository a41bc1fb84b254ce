import type { AnyTransferCommand, GatewayClassification, TransferEvent } from '@payments/contracts';
import { PLACEHOLDER_SEALED_CARD } from '@payments/contracts/testing';
import { idSequence, T0 } from '../../../../test/kits/card-payment.kit';
import { POLICY, uuid } from '../../../../test/kits/payout.kit';
import { decideTransfer } from './decide';
import { evolveTransfer } from './evolve';
import { initialTransferState, type TransferInput, type TransferState } from './model';

/** given/when/then for one transfer: the decider's events folded as the runtime would. */
class TransferWorld {
  readonly ids = idSequence(7000);
  events: TransferEvent[] = [];
  sent: string[] = [];

  state(): TransferState {
    return this.events.reduce(evolveTransfer, initialTransferState);
  }

  apply(input: TransferInput | ((s: TransferState) => TransferInput)) {
    const before = this.state();
    const resolved = typeof input === 'function' ? input(before) : input;
    const decision = decideTransfer(resolved, before, { now: T0, ids: this.ids, policy: POLICY });
    if (decision.outcome !== 'rejected') this.events.push(...decision.events);
    for (const e of decision.effects)
      if (e.type === 'send-gateway-request' && e.request.operation !== 'status')
        this.sent.push(e.request.operation);
    return decision;
  }

  types(): string[] {
    return this.events.map((e) => e.type);
  }
}

function transfer(
  transferId: string,
  type: AnyTransferCommand['type'] = 'transfer',
  minor = 1_500,
): TransferInput {
  const base = {
    commandId: uuid(),
    transferId,
    merchant: { endpointId: '1234' },
    occurredAt: T0,
    amount: { minor, currency: 'EUR' },
    sealedDestinationCard: PLACEHOLDER_SEALED_CARD,
  };
  return {
    kind: 'command',
    command:
      type === 'transfer'
        ? { type, ...base, sealedCard: PLACEHOLDER_SEALED_CARD }
        : { type, ...base },
  };
}

function sendResult(state: TransferState, result: GatewayClassification): TransferInput {
  const op = state.status === 'initial' ? undefined : state.inFlight;
  return {
    kind: 'gateway-result',
    result: {
      requestId: op?.requestId ?? uuid(),
      paymentId: state.status === 'initial' ? uuid() : state.transferId,
      operation: op?.operation ?? 'transfer',
      attempt: 1,
      result,
      completedAt: T0,
    },
  };
}

function statusReply(state: TransferState, status: 'approved' | 'declined'): TransferInput {
  const op = state.status === 'initial' ? undefined : state.inFlight;
  return {
    kind: 'gateway-result',
    result: {
      requestId: uuid(),
      paymentId: state.status === 'initial' ? uuid() : state.transferId,
      operation: 'status',
      subjectRequestId: op?.requestId ?? uuid(),
      attempt: 1,
      result: { kind: 'accepted', report: { status, gatewayOrderId: 'T-1' } },
      completedAt: T0,
    },
    about: ['transfer', 'transfer-by-ref'],
  };
}

describe('transfer (v4 transfer, transfer-by-ref)', () => {
  it.each(['transfer', 'transfer-by-ref'] as const)(
    'given a %s command, its request goes out once with the sealed cards; approved → transferred with the amount',
    (type) => {
      const world = new TransferWorld();
      const id = uuid();
      const first = world.apply(transfer(id, type));
      expect(first.effects).toContainEqual({
        type: 'send-gateway-request',
        request: expect.objectContaining({
          operation: type,
          clientOrderId: id,
          sealedDestinationCard: PLACEHOLDER_SEALED_CARD,
          ...(type === 'transfer' ? { sealedCard: PLACEHOLDER_SEALED_CARD } : {}),
        }),
      });
      world.apply((s) => sendResult(s, { kind: 'accepted', gatewayOrderId: 'T-1' }));
      const done = world.apply((s) => statusReply(s, 'approved'));
      expect(done.events).toMatchObject([
        { type: 'transferred', operation: type, amount: { minor: 1_500, currency: 'EUR' } },
      ]);
      expect(world.types()).toEqual([
        'transfer-requested',
        'transfer-accepted-by-gateway',
        'transferred',
      ]);
      expect(world.sent).toEqual([type]);
      // A late declined reply cannot move a final transfer back.
      expect(world.apply((s) => statusReply(s, 'declined')).outcome).toBe('ignored');
    },
  );

  it('an unknown outcome is resolved only by a status reply; the transfer is sent once', () => {
    const world = new TransferWorld();
    const id = uuid();
    world.apply(transfer(id));
    const unknown = world.apply((s) => sendResult(s, { kind: 'unknown', reason: 'timeout' }));
    expect(unknown.events).toMatchObject([{ type: 'transfer-outcome-unknown', alert: false }]);
    expect(world.state().status).toBe('transferring');
    world.apply((s) => statusReply(s, 'declined'));
    expect(world.state().status).toBe('declined');
    expect(world.sent).toEqual(['transfer']);
  });

  it('refuses before the gateway: an amount above the endpoint maximum, the same transfer id again', () => {
    const world = new TransferWorld();
    const id = uuid();
    const tooBig = world.apply(transfer(id, 'transfer', 10 ** 12));
    expect(tooBig.outcome === 'rejected' && tooBig.rejection.code).toBe('AMOUNT_ABOVE_MAXIMUM');
    world.apply(transfer(id));
    const again = world.apply(transfer(id, 'transfer-by-ref'));
    expect(again.outcome === 'rejected' && again.rejection.code).toBe('TRANSFER_ALREADY_EXISTS');
    expect(world.sent).toEqual(['transfer']);
  });
});
