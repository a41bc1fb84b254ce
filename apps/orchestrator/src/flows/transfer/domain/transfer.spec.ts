import type { AnyTransferCommand, GatewayClassification, TransferEvent } from '@payments/contracts';
import { PLACEHOLDER_SEALED_CARD } from '@payments/contracts/testing';
import { idSequence, T0 } from '../../../../test/kits/card-payment.kit';
import {
  BudgetBook,
  command as payoutCommand,
  oneStepPayout,
  POLICY,
  PayoutWorld,
  uuid,
} from '../../../../test/kits/payout.kit';
import { decideTransfer } from './decide';
import { evolveTransfer } from './evolve';
import { initialTransferState, type TransferInput, type TransferState } from './model';

/**
 * given/when/then for transfers: the decider's events folded as the runtime would, the daily
 * budget's reservations carried out on a budget book (shareable with payouts) and answered back.
 */
class TransferWorld {
  readonly ids = idSequence(7000);
  readonly transfers = new Map<string, TransferEvent[]>();
  /** Published requests (operation), in order; `sentFor`: by transfer. */
  sent: string[] = [];
  sentFor: string[] = [];
  private readonly held = new Map<string, { transferId: string; operation: string }>();
  private last?: string;
  readonly book: BudgetBook;

  constructor(book?: BudgetBook) {
    this.book = book ?? new BudgetBook(this.ids, POLICY);
  }

  get events(): TransferEvent[] {
    return this.last === undefined ? [] : (this.transfers.get(this.last) ?? []);
  }

  state(transferId = this.last): TransferState {
    return (transferId === undefined ? [] : (this.transfers.get(transferId) ?? [])).reduce(
      evolveTransfer,
      initialTransferState,
    );
  }

  apply(input: TransferInput | ((s: TransferState) => TransferInput), transferId?: string) {
    const id = transferId ?? idOf(input) ?? this.last;
    if (id === undefined) throw new Error('which transfer?');
    this.last = id;
    const before = this.state(id);
    const resolved = typeof input === 'function' ? input(before) : input;
    const decision = decideTransfer(resolved, before, { now: T0, ids: this.ids, policy: POLICY });
    if (decision.outcome !== 'rejected')
      this.transfers.set(id, [...(this.transfers.get(id) ?? []), ...decision.events]);
    for (const e of decision.effects) {
      switch (e.type) {
        case 'send-gateway-request':
          if (e.request.operation === 'status') break;
          if ('held' in e && e.held)
            this.held.set(e.request.requestId, { transferId: id, operation: e.request.operation });
          else this.publish(id, e.request.operation);
          break;
        case 'publish-held-request': {
          const held = this.held.get(e.requestId);
          if (held === undefined) throw new Error(`no held request ${e.requestId}`);
          this.held.delete(e.requestId);
          this.publish(held.transferId, held.operation);
          break;
        }
        case 'reserve-budget':
        case 'release-budget':
          for (const answer of this.book.carryOut(e, T0))
            this.apply({ kind: 'command', command: answer }, answer.payoutId);
          this.last = id;
          break;
        case 'resend-gateway-request':
        case 'schedule-timer':
        case 'cancel-timer':
          break;
        default: {
          const never: never = e;
          throw new Error(`unhandled effect ${JSON.stringify(never)}`);
        }
      }
    }
    return decision;
  }

  private publish(transferId: string, operation: string): void {
    this.sent.push(operation);
    this.sentFor.push(transferId);
  }

  types(transferId = this.last): string[] {
    return (transferId === undefined ? [] : (this.transfers.get(transferId) ?? [])).map(
      (e) => e.type,
    );
  }
}

function idOf(input: TransferInput | ((s: TransferState) => TransferInput)): string | undefined {
  if (typeof input === 'function' || input.kind !== 'command') return undefined;
  const c = input.command;
  return c.type === 'payout-budget-answer' ? c.payoutId : c.transferId;
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
        held: true,
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

  it("an operator's refresh of an unknown transfer asks the gateway now; the status reply decides, nothing is sent again", () => {
    const world = new TransferWorld();
    const id = uuid();
    const refresh = (endpointId = '1234'): TransferInput => ({
      kind: 'command',
      command: {
        type: 'refresh-transfer-status',
        commandId: uuid(),
        transferId: id,
        merchant: { endpointId },
        occurredAt: T0,
      },
    });
    expect(world.apply(refresh())).toMatchObject({
      outcome: 'rejected',
      rejection: { code: 'TRANSFER_NOT_FOUND' },
    });
    world.apply(transfer(id));
    world.apply((s) => sendResult(s, { kind: 'unknown', reason: 'timeout' }));
    const op = world.state();
    const requestId = op.status === 'initial' ? undefined : op.inFlight?.requestId;
    const asked = world.apply(refresh());
    // No event: asking is not news; only the answer is.
    expect(asked).toMatchObject({ outcome: 'accepted', events: [] });
    expect(asked.effects).toEqual([
      {
        type: 'send-gateway-request',
        request: expect.objectContaining({
          operation: 'status',
          paymentId: id,
          clientOrderId: id,
          subjectRequestId: requestId,
          subjectOperation: 'transfer',
        }),
      },
    ]);
    expect(world.apply(refresh('9999'))).toMatchObject({
      rejection: { code: 'MERCHANT_MISMATCH' },
    });
    world.apply((s) => statusReply(s, 'approved'));
    expect(world.types()).toEqual([
      'transfer-requested',
      'transfer-outcome-unknown',
      'transferred',
    ]);
    expect(world.sent).toEqual(['transfer']);
    // Settled: nothing left to ask about.
    expect(world.apply(refresh())).toMatchObject({
      outcome: 'rejected',
      rejection: { code: 'NOTHING_TO_REFRESH' },
    });
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

describe("transfers draw on the endpoint's daily payout budget before their request goes out", () => {
  it('given a transfer, its request is written held with the reservation and published once granted', () => {
    const world = new TransferWorld();
    const id = uuid();
    const opened = world.apply(transfer(id, 'transfer', 30_000));
    expect(opened.effects).toEqual([
      expect.objectContaining({ type: 'send-gateway-request', held: true }),
      {
        type: 'reserve-budget',
        payoutId: id,
        merchant: { endpointId: '1234' },
        amount: { minor: 30_000, currency: 'EUR' },
        day: T0.slice(0, 10),
      },
    ]);
    expect(world.sent).toEqual(['transfer']);
    expect(world.types(id)).toEqual(['transfer-requested']);
    expect(world.book.reservedOn()).toBe(30_000);
  });

  it('three transfers of 40,000 under a daily limit of 100,000: two sent, the third refused, nothing sent for it', () => {
    const world = new TransferWorld();
    const [a, b, c] = [uuid(), uuid(), uuid()];
    world.apply(transfer(a, 'transfer', 40_000));
    world.apply(transfer(b, 'transfer-by-ref', 40_000));
    world.apply(transfer(c, 'transfer', 40_000));
    expect(world.sentFor).toEqual([a, b]);
    expect(world.types(c)).toEqual(['transfer-requested', 'transfer-refused']);
    expect(world.transfers.get(c)?.at(-1)).toMatchObject({
      type: 'transfer-refused',
      reason: 'DAILY_PAYOUT_LIMIT_EXCEEDED',
      reservedToday: { minor: 80_000, currency: 'EUR' },
      dailyLimit: { minor: 100_000, currency: 'EUR' },
    });
    expect(world.state(c)).toMatchObject({ status: 'refused' });
    expect(world.state(c)).not.toHaveProperty('inFlight');
    expect(world.book.reservedOn()).toBe(80_000);
  });

  it('payouts and transfers share one budget: a transfer after 80,000 of one-step payouts is refused for 30,000', () => {
    const payouts = new PayoutWorld();
    const world = new TransferWorld(payouts.book);
    const [p1, p2, t] = [uuid(), uuid(), uuid()];
    payouts.apply(p1, payoutCommand(oneStepPayout(p1, 40_000)), T0);
    payouts.apply(p2, payoutCommand(oneStepPayout(p2, 40_000)), T0);
    world.apply(transfer(t, 'transfer', 30_000));
    expect(world.types(t)).toEqual(['transfer-requested', 'transfer-refused']);
    expect(world.sent).toEqual([]);
    expect(payouts.book.reservedOn()).toBe(80_000);
  });

  it.each([
    ['declined', (s: TransferState) => statusReply(s, 'declined'), 'transfer-declined'],
    [
      'failed (rejected by the gateway)',
      (s: TransferState) => sendResult(s, { kind: 'rejected', code: '300', message: 'no' }),
      'transfer-failed',
    ],
  ] as const)('%s: its reservation is released', (_name, outcome, type) => {
    const world = new TransferWorld();
    const id = uuid();
    world.apply(transfer(id, 'transfer', 60_000));
    expect(world.book.reservedOn()).toBe(60_000);
    const ended = world.apply(outcome);
    expect(ended.events).toMatchObject([{ type }]);
    expect(ended.effects).toContainEqual({
      type: 'release-budget',
      payoutId: id,
      merchant: { endpointId: '1234' },
      currency: 'EUR',
      day: T0.slice(0, 10),
    });
    expect(world.book.reservedOn()).toBe(0);
  });

  it('an unknown outcome and a transfer made keep the reservation', () => {
    const world = new TransferWorld();
    const id = uuid();
    world.apply(transfer(id, 'transfer', 60_000));
    const unknown = world.apply((s) => sendResult(s, { kind: 'unknown', reason: 'timeout' }));
    expect(unknown.effects).not.toContainEqual(expect.objectContaining({ type: 'release-budget' }));
    const done = world.apply((s) => statusReply(s, 'approved'));
    expect(done.events).toMatchObject([{ type: 'transferred' }]);
    expect(done.effects).not.toContainEqual(expect.objectContaining({ type: 'release-budget' }));
    expect(world.book.reservedOn()).toBe(60_000);
  });

  it('an amount above the whole daily limit is refused with the command (DAILY_PAYOUT_LIMIT_EXCEEDED)', () => {
    const world = new TransferWorld();
    const refused = world.apply(transfer(uuid(), 'transfer', 100_001));
    expect(refused.outcome === 'rejected' && refused.rejection.code).toBe(
      'DAILY_PAYOUT_LIMIT_EXCEEDED',
    );
    expect(world.book.reservedOn()).toBe(0);
  });
});
