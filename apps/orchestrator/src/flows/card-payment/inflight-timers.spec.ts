/**
 * Operations in flight are never lost (issue 32 items 2 and 8): every request sent has a deadline
 * for its result, and every operation in flight — the payment's operation and a card-reference
 * request beside it — keeps timers of its own, which another operation's never replace. Checked
 * through the flow's binding and the runtime's write plan, with the timers table's key rules.
 */
import fc from 'fast-check';
import type {
  CardReferenceCommand,
  GatewayClassification,
  GatewayRequest,
  GatewayStatusReport,
  PaymentCommand,
  PaymentEvent,
} from '@payments/contracts';
import {
  captureCommand,
  MERCHANT,
  PAYMENT_ID,
  preauthCommand,
  returnCommand,
  saleCommand,
  testUuid,
  voidCommand,
} from '@payments/contracts/testing';
import * as payments from '../../../test/kits/card-payment.kit';
import { withAskedAmount } from '../../../test/kits/flow.kit';
import { keeps, lastPerTimer, type TimerChange } from '../../persistence/timer.repository';
import type { RuntimeEffect, SagaInput } from '../../runtime/flow';
import { planWrites, RESEND_TIMER, type ResendPayload } from '../../runtime/write-plan';
import { cardPaymentFlow } from './card-payment.flow';
import { DEFAULT_POLICY, initialState, type PaymentState } from './domain';

const DEADLINE_MS = 30_000;
const policy = { ...DEFAULT_POLICY, neverReceivedAfterMs: 60_000, resultDeadlineMs: DEADLINE_MS };
const flow = cardPaymentFlow(policy);
const iso = (ms: number) => new Date(Date.parse(payments.T0) + ms).toISOString();

const asSaga = (c: PaymentCommand | CardReferenceCommand): SagaInput => ({
  kind: 'command',
  command: { type: c.type, commandId: c.commandId, sagaId: PAYMENT_ID, endpointId: '1', body: c },
});
const cardRefCommand = (type: 'create-card-ref' | 'get-card-info'): CardReferenceCommand => ({
  type,
  commandId: testUuid(),
  paymentId: PAYMENT_ID,
  merchant: MERCHANT,
  occurredAt: payments.T0,
});

describe('a deadline for every send’s result (issue 32 item 8)', () => {
  it('a first send arms the deadline of its result, the request’s own timer; its first result drops it', () => {
    const sent = flow.decide(asSaga(saleCommand()), initialState, {
      now: payments.T0,
      ids: payments.idSequence(),
    });
    const send = sent.effects.find((e) => e.type === 'send-gateway-request');
    const requestId = send?.type === 'send-gateway-request' ? send.request.requestId : '';
    expect(sent.effects).toContainEqual({
      type: 'set-timer',
      kind: 'result-deadline',
      scope: requestId,
      at: iso(DEADLINE_MS),
      payload: { kind: 'result-deadline', requestId, attempt: 1 },
    });
    const state = sent.events.reduce(flow.evolve, initialState);
    // Not sent (our limits, until retryAt): dropped, and armed again from when it may go.
    const held = flow.decide(
      {
        kind: 'gateway-result',
        result: {
          requestId,
          paymentId: PAYMENT_ID,
          operation: 'sale',
          attempt: 1,
          result: { kind: 'not-sent', reason: 'rate limited', retryAt: iso(10_000) },
          completedAt: iso(1_000),
        },
      },
      state,
      { now: iso(1_000), ids: payments.idSequence() },
    );
    expect(held.effects).toEqual([
      { type: 'cancel-timer', kind: 'result-deadline', scope: requestId },
      expect.objectContaining({ type: 'resend-gateway-request', attempt: 2 }),
      expect.objectContaining({
        type: 'set-timer',
        kind: 'result-deadline',
        scope: requestId,
        at: iso(10_000 + DEADLINE_MS),
        payload: { kind: 'result-deadline', requestId, attempt: 2 },
      }),
    ]);
  });

  it('past the deadline with no result the operation is unknown, polled and alerted after the window; obsolete once answered', () => {
    const sent = payments.givenInputs(payments.command(saleCommand()));
    const requestId = sent.state.inFlight?.requestId ?? '';
    const deadline = payments.timer({ kind: 'result-deadline', requestId, attempt: 1 });
    sent
      .when(deadline, iso(DEADLINE_MS), policy)
      .then([{ type: 'outcome-unknown', operation: 'sale', since: iso(DEADLINE_MS), alert: false }])
      .thenEffects([
        { type: 'schedule-timer', timer: { kind: 'status-poll', requestId, attempt: 1 } },
        {
          type: 'schedule-timer',
          timer: { kind: 'unknown-alert', requestId },
          at: iso(DEADLINE_MS + policy.unknownAlertAfterMs),
        },
      ])
      .thenState({ status: 'outcome-unknown' });
    sent
      .and(payments.acceptedResult())
      .when(deadline, iso(DEADLINE_MS), policy)
      .thenIgnored('TIMER_OBSOLETE');
  });

  it('a card-reference request without its result is unknown and asked again, as a lost reply', () => {
    const pending = payments.approvedSale().and({
      kind: 'command',
      command: cardRefCommand('create-card-ref'),
    });
    const requestId =
      (pending.state.status !== 'initial' && pending.state.cardRefRequest?.requestId) || '';
    pending
      .when(
        payments.timer({ kind: 'result-deadline', requestId, attempt: 1 }),
        iso(DEADLINE_MS),
        policy,
      )
      .then([{ type: 'card-reference-unknown', requestId, alert: false }])
      .thenEffects([
        { type: 'resend-gateway-request', requestId, attempt: 2, afterNoTrace: true },
        { type: 'schedule-timer', timer: { kind: 'card-ref-alert', requestId } },
      ]);
  });
});

// ---- a saga's operations, interleaved at random, on the runtime's timers --------------------------

interface Timer {
  readonly kind: string;
  readonly scope: string;
  readonly at: number;
  readonly payload: unknown;
}

/** A request published and not answered yet (what the gateway adapter would answer). */
interface Outstanding {
  readonly request: GatewayRequest;
  readonly attempt: number;
}

/** One saga under the runtime: its state, its timers (keyed as the table keys them), the adapter. */
class SagaSim {
  state: PaymentState = initialState;
  now = 0;
  readonly timers = new Map<string, Timer>();
  readonly outstanding: Outstanding[] = [];
  private readonly requests = new Map<string, GatewayRequest>();
  private readonly ids = payments.idSequence();

  decide(input: SagaInput): void {
    const decision = flow.decide(input, this.state, { now: iso(this.now), ids: this.ids });
    const effects: readonly RuntimeEffect[] =
      decision.outcome === 'rejected' ? [] : decision.effects;
    const plan = planWrites({
      sagaId: PAYMENT_ID,
      flow,
      state: this.state,
      version: this.state.version,
      events: decision.events as PaymentEvent[],
      effects,
      meta: {},
      now: new Date(Date.parse(iso(this.now))),
      ids: this.ids,
    });
    if (plan.next !== undefined) this.state = plan.next.state as PaymentState;
    for (const request of plan.gatewayRequests) this.requests.set(request.requestId, request);
    for (const effect of effects)
      if (effect.type === 'send-gateway-request' && effect.held !== true)
        this.outstanding.push({ request: effect.request, attempt: effect.request.attempt });
    for (const resend of plan.resends) this.resend(resend);
    this.applyTimers(plan.timers);
  }

  /** As the timers statement: cancels (sparing what the decision sets), sets, advances. */
  private applyTimers(changes: readonly TimerChange[]): void {
    const last = lastPerTimer(changes);
    const key = (kind: string, scope: string) => `${kind}/${scope}`;
    const set = new Set(last.flatMap((c) => (c.op === 'set' ? [key(c.kind, c.scope ?? '')] : [])));
    for (const c of last)
      if (c.op === 'cancel')
        for (const [k, t] of this.timers)
          if (t.kind === c.kind && (c.scope === undefined || c.scope === t.scope) && !set.has(k))
            this.timers.delete(k);
    for (const c of last) {
      if (c.op === 'set') {
        const scope = c.scope ?? '';
        const stored = this.timers.get(key(c.kind, scope));
        // A keep-sooner set leaves a pending timer it keeps (due no later; hinted, if asked) as it is.
        if (
          c.keepSooner !== undefined &&
          stored !== undefined &&
          keeps(
            { at: new Date(Date.parse(payments.T0) + stored.at), payload: stored.payload },
            c.keepSooner,
            c.at,
          )
        )
          continue;
        this.timers.set(key(c.kind, scope), {
          kind: c.kind,
          scope,
          at: c.at.getTime() - Date.parse(payments.T0),
          payload: c.payload,
        });
      } else if (c.op === 'advance') {
        const stored = this.timers.get(key(c.kind, c.requestId));
        const at = c.at.getTime() - Date.parse(payments.T0);
        if (stored !== undefined && stored.at > at)
          this.timers.set(key(c.kind, c.requestId), { ...stored, at });
      }
    }
  }

  /** The runtime's resend: the stored request published again while the flow still wants it. */
  private resend(payload: ResendPayload): void {
    const original = this.requests.get(payload.requestId);
    if (original === undefined || !flow.resendWanted(this.state, payload.requestId)) return;
    const attempt = payload.attempt ?? original.attempt;
    this.outstanding.push({ request: { ...original, attempt }, attempt });
  }

  /** The earliest timer fires (the clock moves to it if it is not due yet). */
  fireNext(): void {
    const next = [...this.timers.entries()].sort(([, a], [, b]) => a.at - b.at)[0];
    if (next === undefined) return;
    const [k, timer] = next;
    this.now = Math.max(this.now, timer.at);
    this.timers.delete(k);
    if (timer.kind === RESEND_TIMER) this.resend(timer.payload as ResendPayload);
    else this.decide({ kind: 'timer', timer: { kind: timer.kind, payload: timer.payload } });
  }

  /** The adapter's answer to an outstanding request (`lost`: dead-lettered, never answered). */
  answer(index: number, variant: number, lost: boolean): void {
    const [sent] = this.outstanding.splice(index % this.outstanding.length, 1);
    if (sent === undefined || lost) return;
    const { request, attempt } = sent;
    const result =
      request.operation === 'status'
        ? statusAnswer(this.state, request, variant)
        : sendAnswer(request, variant, iso(this.now + 5_000));
    this.decide({
      kind: 'gateway-result',
      result: {
        requestId: request.requestId,
        paymentId: PAYMENT_ID,
        operation: request.operation,
        attempt,
        result,
        completedAt: iso(this.now),
        ...(request.operation === 'status'
          ? {
              subjectRequestId: request.subjectRequestId,
              subjectOperation: request.subjectOperation,
            }
          : {}),
      },
    });
  }

  /** The operations in flight that lack a timer of their own that acts on them. */
  withoutTimer(): string[] {
    if (this.state.status === 'initial') return [];
    const live = new Set(
      [...this.timers.values()]
        .filter((t) => ['status-poll', 'result-deadline', RESEND_TIMER].includes(t.kind))
        // The request a timer acts on is the one its payload names, whatever its key.
        .map((t) => (t.payload as { requestId?: string }).requestId),
    );
    return [this.state.inFlight, this.state.cardRefRequest].flatMap((op) =>
      op === undefined || live.has(op.requestId) ? [] : [`${op.operation} ${op.requestId}`],
    );
  }
}

const GATEWAY_TYPE: Record<string, string> = {
  sale: 'sale',
  preauth: 'preauth',
  capture: 'capture',
  void: 'void',
  return: 'reversal',
};

function sendAnswer(
  request: GatewayRequest,
  variant: number,
  retryAt: string,
): GatewayClassification {
  const serialNumber = `sn-${request.requestId}`;
  switch (variant % 6) {
    case 0:
      return request.operation === 'create-card-ref'
        ? { kind: 'accepted', cardReference: { refId: 'ref-1' } }
        : request.operation === 'get-card-info'
          ? {
              kind: 'accepted',
              cardReference: { card: { bin: '444444', lastFour: '4448', brand: 'VISA' } },
            }
          : { kind: 'accepted', gatewayOrderId: 'gw-1', serialNumber };
    case 1:
    case 5:
      return { kind: 'not-sent', reason: 'rate limited', retryAt };
    case 2:
      return { kind: 'not-sent', reason: 'connect refused' };
    case 3:
      return { kind: 'rejected', code: '429', message: 'too many requests' };
    default:
      return { kind: 'unknown', reason: 'timeout' };
  }
}

function statusAnswer(
  state: PaymentState,
  request: GatewayRequest,
  variant: number,
): GatewayClassification {
  const op = state.status === 'initial' ? undefined : state.inFlight;
  const subject = request.operation === 'status' ? request.subjectOperation : undefined;
  const report = (status: GatewayStatusReport['status']): GatewayClassification => ({
    kind: 'accepted',
    // A status reply names the order's amount (the spec's STATUS reply carries it).
    report: withAskedAmount<GatewayStatusReport>(
      {
        status,
        gatewayOrderId: 'gw-1',
        transactionType: GATEWAY_TYPE[subject ?? 'sale'],
        requestSerial:
          op?.serial ?? `sn-${request.operation === 'status' ? request.subjectRequestId : ''}`,
      },
      op ?? {},
    ),
  });
  switch (variant % 5) {
    case 0:
      return report('approved');
    case 1:
      return report('declined');
    case 2:
      return report('processing');
    case 3:
      return { kind: 'rejected', code: '2', message: 'unknown client_orderid', orderUnknown: true };
    default:
      return { kind: 'unknown', reason: 'timeout' };
  }
}

const commandOf = (variant: number): PaymentCommand | CardReferenceCommand => {
  const amount = { minor: 2_000, currency: 'EUR' };
  switch (variant % 5) {
    case 0:
      return captureCommand();
    case 1:
      return voidCommand();
    case 2:
      return returnCommand({ amount });
    case 3:
      return cardRefCommand('create-card-ref');
    default:
      return cardRefCommand('get-card-info');
  }
};

/** The opening operation accepted, then approved by its first poll's status reply. */
/** A preauth authorized and its capture sent, not answered yet; `poll`: the capture's poll timer. */
function captureSent() {
  const sim = new SagaSim();
  sim.decide(asSaga(preauthCommand()));
  settle(sim);
  sim.decide(asSaga(captureCommand()));
  const sent = sim.outstanding.find((o) => o.request.operation === 'capture');
  if (sent === undefined) throw new Error('no capture sent');
  const poll = () => sim.timers.get(`status-poll/${sent.request.requestId}`);
  return { sim, sent, poll };
}

/** The gateway's verified server callback: `capture` approved on the order (a hint). */
function captureApproved(capture: GatewayRequest, at: number): SagaInput {
  return {
    kind: 'callback',
    callback: {
      kind: 'callback',
      notificationId: `n-capture-${at}`,
      paymentId: PAYMENT_ID,
      clientOrderId: capture.clientOrderId,
      source: 'server-callback',
      report: { status: 'approved', transactionType: 'capture', gatewayOrderId: 'gw-1' },
      receivedAt: iso(at),
    },
  };
}

function settle(sim: SagaSim): void {
  sim.answer(0, 0, false);
  sim.fireNext();
  sim.answer(sim.outstanding.length - 1, 0, false);
}

type Move =
  | { readonly kind: 'command'; readonly variant: number }
  | { readonly kind: 'answer' | 'lose'; readonly pick: number; readonly variant: number }
  | { readonly kind: 'fire' }
  | { readonly kind: 'wait'; readonly ms: number };

const move: fc.Arbitrary<Move> = fc.oneof(
  fc.record({ kind: fc.constant('command' as const), variant: fc.nat(20) }),
  fc.record({ kind: fc.constant('answer' as const), pick: fc.nat(10), variant: fc.nat(30) }),
  fc.record({ kind: fc.constant('answer' as const), pick: fc.nat(10), variant: fc.nat(30) }),
  fc.record({ kind: fc.constant('lose' as const), pick: fc.nat(10), variant: fc.nat(30) }),
  fc.record({ kind: fc.constant('fire' as const) }),
  fc.record({ kind: fc.constant('fire' as const) }),
  fc.record({ kind: fc.constant('wait' as const), ms: fc.nat(120_000) }),
);

describe('every operation in flight always has a live timer of its own (issue 32 items 2, 8)', () => {
  it('over random interleavings of a sale or preauth, its follow-ups and card-reference requests, with answers not sent, refused, unknown, lost, resent and status replies', () => {
    fc.assert(
      fc.property(
        fc.boolean(),
        fc.boolean(),
        fc.array(move, { minLength: 1, maxLength: 60 }),
        (hold, settled, moves) => {
          const sim = new SagaSim();
          sim.decide(asSaga(hold ? preauthCommand() : saleCommand()));
          // In half the runs the opening operation is taken and approved first: follow-ups and
          // card-reference requests get their turn, often in flight together.
          if (settled) settle(sim);
          for (const m of moves) {
            switch (m.kind) {
              case 'command':
                sim.decide(asSaga(commandOf(m.variant)));
                break;
              case 'answer':
              case 'lose':
                if (sim.outstanding.length > 0) sim.answer(m.pick, m.variant, m.kind === 'lose');
                break;
              case 'fire':
                sim.fireNext();
                break;
              case 'wait':
                sim.now += m.ms;
                break;
              default:
                throw new Error('unhandled move');
            }
            expect(sim.withoutTimer()).toEqual([]);
          }
        },
      ),
      { numRuns: 500 },
    );
  });

  it("a verified callback that came before its capture's send result keeps its hinted poll due then: the result's first poll, seconds later, does not put it off", () => {
    const { sim, sent, poll } = captureSent();
    // The gateway's callback about the capture reaches the orchestrator before the adapter's
    // result (two topics, not ordered with each other): a hint, its urgent poll due now.
    sim.now += 1_000;
    const hintedAt = sim.now;
    sim.decide(captureApproved(sent.request, hintedAt));
    expect(poll()).toMatchObject({ at: hintedAt, payload: { hinted: true } });
    // Then the send result: accepted, its first poll seconds on — the hint's stays.
    sim.now += 50;
    sim.answer(sim.outstanding.indexOf(sent), 0, false);
    expect(sim.state.inFlight?.stage).toBe('processing');
    expect(poll()).toMatchObject({ at: hintedAt, payload: { hinted: true } });
  });

  it("a verified callback that came while the capture's routine status query waited in the adapter keeps its hinted poll: the query's held answer (retryAt) does not put it off", () => {
    const { sim, sent, poll } = captureSent();
    sim.answer(sim.outstanding.indexOf(sent), 0, false);
    // The first poll fires: a routine status query goes to the adapter, the cadence's next poll
    // is armed.
    sim.fireNext();
    const query = sim.outstanding.find((o) => o.request.operation === 'status');
    if (query === undefined) throw new Error('no status query sent');
    expect(poll()?.payload).not.toHaveProperty('hinted');
    // The capture's callback comes while the query waits in the adapter's room: a hint.
    const hintedAt = sim.now;
    sim.decide(captureApproved(sent.request, hintedAt));
    expect(poll()).toMatchObject({ at: hintedAt, payload: { hinted: true } });
    // Then the query's answer: held by the budget, asked again in 30 s — the hint's poll stays.
    sim.outstanding.splice(sim.outstanding.indexOf(query), 1);
    sim.decide({
      kind: 'gateway-result',
      result: {
        requestId: query.request.requestId,
        paymentId: PAYMENT_ID,
        operation: 'status',
        attempt: 1,
        result: { kind: 'not-sent', reason: 'status budget spent', retryAt: iso(sim.now + 30_000) },
        completedAt: iso(sim.now),
        subjectRequestId: sent.request.requestId,
        priority: 'routine',
      },
    });
    expect(poll()).toMatchObject({ at: hintedAt, payload: { hinted: true } });
  });

  it('a capture held back four times and a card reference held back during its back-off both keep their resend (the scenario of item 2)', () => {
    const sim = new SagaSim();
    sim.decide(asSaga(preauthCommand()));
    settle(sim);
    expect(sim.state.status).toBe('authorized');
    sim.decide(asSaga(captureCommand()));
    for (let i = 0; i < 4; i++) {
      const capture = sim.outstanding.findIndex((o) => o.request.operation === 'capture');
      sim.answer(capture, 1, false); // not sent: rate limited, resend at retryAt
      if (i < 3) sim.fireNext();
    }
    sim.decide(asSaga(cardRefCommand('create-card-ref')));
    const ref = sim.outstanding.findIndex((o) => o.request.operation === 'create-card-ref');
    sim.answer(ref, 1, false);
    expect(sim.withoutTimer()).toEqual([]);
    const resends = [...sim.timers.values()].filter((t) => t.kind === RESEND_TIMER);
    expect(resends).toHaveLength(2);
  });
});
