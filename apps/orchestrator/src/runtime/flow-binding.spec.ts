import type { GatewayCallback, GatewayResult } from '@payments/contracts';
import { runtimeEffectOf, singleOperationSaga, transactionTypes } from './flow-binding';

const callback = (transactionType?: string): GatewayCallback => ({
  kind: 'callback',
  notificationId: 'n-1',
  paymentId: '00000000-0000-4000-8000-000000000001',
  clientOrderId: '00000000-0000-4000-8000-000000000001',
  source: 'server-callback',
  report: {
    status: 'approved',
    gatewayOrderId: 'G-1',
    ...(transactionType === undefined ? {} : { transactionType }),
  },
  receivedAt: '2026-11-23T00:00:00.000Z',
});

describe('transactionTypes', () => {
  const types = transactionTypes<'transfer' | 'transfer-by-ref'>({
    transfer: ['transfer', 'transfer-by-ref'],
  });

  it('names the flow operations a gateway type can be about, case-insensitively; an unknown type names none; no type: undefined', () => {
    expect(types.named('TRANSFER')).toEqual(['transfer', 'transfer-by-ref']);
    expect(types.named('sale')).toEqual([]);
    expect(types.named(undefined)).toBeUndefined();
  });

  it('a callback without a transaction type carries no `about` (it names no operation: a hint)', () => {
    expect(types.callbackInput(callback())).not.toHaveProperty('about');
    expect(types.callbackInput(callback('transfer'))).toMatchObject({
      about: ['transfer', 'transfer-by-ref'],
    });
  });

  it('only an accepted status reply is given the operations it names', () => {
    const status = (kind: 'accepted' | 'unknown'): GatewayResult => ({
      requestId: '00000000-0000-4000-8000-000000000002',
      paymentId: '00000000-0000-4000-8000-000000000001',
      operation: 'status',
      subjectRequestId: '00000000-0000-4000-8000-000000000003',
      attempt: 1,
      result:
        kind === 'accepted'
          ? { kind, report: { status: 'approved', transactionType: 'transfer' } }
          : { kind, reason: 'timeout' },
      completedAt: '2026-11-23T00:00:00.000Z',
    });
    expect(types.resultInput(status('accepted'))).toMatchObject({
      about: ['transfer', 'transfer-by-ref'],
    });
    expect(types.resultInput(status('unknown'))).not.toHaveProperty('about');
  });
});

describe('runtimeEffectOf', () => {
  it("timers become keyed runtime timers with the decider timer as payload, an operation's scoped by its request", () => {
    const timer = { kind: 'status-poll', requestId: 'r', attempt: 2 } as const;
    expect(runtimeEffectOf({ type: 'schedule-timer', timer, at: 'T' })).toEqual({
      type: 'set-timer',
      kind: 'status-poll',
      at: 'T',
      payload: timer,
      scope: 'r',
    });
    const own = { kind: 'hold-expiry', action: 'void' } as const;
    expect(runtimeEffectOf({ type: 'schedule-timer', timer: own, at: 'T' })).toEqual({
      type: 'set-timer',
      kind: 'hold-expiry',
      at: 'T',
      payload: own,
    });
    expect(runtimeEffectOf<typeof timer>({ type: 'cancel-timer', timer: 'status-poll' })).toEqual({
      type: 'cancel-timer',
      kind: 'status-poll',
    });
  });
});

describe('singleOperationSaga', () => {
  type S =
    | { status: 'initial' }
    | {
        status: string;
        merchant: { endpointId: string };
        clientOrderId: string;
        inFlight?: { requestId: string };
      };
  const saga = singleOperationSaga<S>('transfer', 'transferring');
  const open = (status: string): S => ({
    status,
    merchant: { endpointId: '1113' },
    clientOrderId: 'c-1',
    ...(status === 'transferring' ? { inFlight: { requestId: 'r-1' } } : {}),
  });

  it('settled (sealed cards purged) and no resend once the operation has its outcome', () => {
    expect(saga.project(open('transferring'))).toMatchObject({ kind: 'transfer', settled: false });
    expect(saga.project(open('transferred'))).toMatchObject({ settled: true });
    expect(saga.project({ status: 'initial' })).toEqual({
      status: 'initial',
      kind: null,
      settled: false,
    });
    expect(saga.resendWanted(open('transferring'), 'r-1')).toBe(true);
    expect(saga.resendWanted(open('transferring'), 'r-2')).toBe(false);
    expect(saga.resendWanted(open('transferred'), 'r-1')).toBe(false);
  });
});
