import type { GatewayClassification, GatewayStatusReport, PaymentEvent } from '@payments/contracts';
import {
  preauthCommand,
  returnCommand,
  saleCommand,
  voidCommand,
} from '@payments/contracts/testing';
import * as payments from '../../../../test/kits/card-payment.kit';
import {
  SERIAL_QUERY_ATTEMPTS,
  SERIAL_QUESTION_MAX_MS,
  SERIAL_QUESTION_MIN_MS,
} from '../../../domain/gateway-operation/operation-serial';
import { gatewayResultInput } from '../gateway-vocabulary';
import type { PaymentState } from './state';

/**
 * Issue #35: a sale (preauth, form, rebill) settled by its verified callback names no serial; the
 * saga asks for it once the outcome is settled, and holds a follow-up until the question closes
 * (domain/gateway-operation/operation-serial.ts, decide-serial.ts).
 */

const markOf = (state: PaymentState) =>
  state.status === 'initial' ? undefined : state.serialPending;
const SALE_SERIAL = 'sn-the-sale';
const QUERY_ID = '10000000-0000-4000-8000-00000000beef';

/** The reply to a serial query about `subject` (by default the marked request). */
const serialReply =
  (result: GatewayClassification, subject?: string) =>
  (state: PaymentState, now: string = payments.T0) =>
    gatewayResultInput({
      requestId: QUERY_ID,
      paymentId: state.status === 'initial' ? '' : state.paymentId,
      operation: 'status',
      subjectRequestId: subject ?? markOf(state)?.requestId ?? '',
      attempt: 1,
      result,
      completedAt: now,
    });

const aboutTheSale = (extra: Partial<GatewayStatusReport> = {}): GatewayClassification => ({
  kind: 'accepted',
  report: {
    status: 'approved',
    gatewayOrderId: 'gw-777',
    transactionType: 'sale',
    amount: payments.eur(10_000),
    requestSerial: SALE_SERIAL,
    ...extra,
  },
});

/** The sale's own send result, arriving after its callback settled it. */
const lateSendResult =
  (result: GatewayClassification) =>
  (state: PaymentState, now: string = payments.T0) =>
    gatewayResultInput({
      requestId: markOf(state)?.requestId ?? '',
      paymentId: state.status === 'initial' ? '' : state.paymentId,
      operation: 'sale',
      attempt: 1,
      result,
      completedAt: now,
    });

/** A sale whose reply was lost, settled by its verified callback: its serial never named. */
const lostReplySettledByCallback = () =>
  payments.givenInputs(
    payments.command(saleCommand()),
    payments.result({ kind: 'unknown', reason: 'timeout' }),
    payments.callback('approved'),
  );

const moneyEvents = (events: readonly PaymentEvent[]) =>
  events.filter((e) =>
    ['approved', 'authorized', 'captured', 'voided', 'returned'].includes(e.type),
  );

describe('a sale settled by its callback learns its serial afterwards (issue #35)', () => {
  it('the callback settles it as before, and the saga asks for its serial once, later, in the background class', () => {
    const unknown = payments.givenInputs(
      payments.command(saleCommand()),
      payments.result({ kind: 'unknown', reason: 'timeout' }),
    );
    const saleId = unknown.state.inFlight?.requestId;
    const settled = unknown
      .when(payments.callback('approved'))
      .then([{ type: 'approved', amount: payments.eur(10_000) }])
      .thenEffects([
        { type: 'cancel-timer', timer: 'status-poll' },
        { type: 'cancel-timer', timer: 'unknown-alert' },
        {
          type: 'schedule-timer',
          timer: { kind: 'serial-query', requestId: saleId, attempt: 1 },
          at: payments.at(15_000),
        },
      ])
      .thenState({
        status: 'approved',
        serialPending: expect.objectContaining({ requestId: saleId, operation: 'sale' }),
      });
    // The timer asks exactly one status query, by order (no serial to ask by), and arms the next.
    const history = payments.given(...unknown.events, ...settled.decision.events);
    const fired = history.when(
      payments.timer({ kind: 'serial-query', requestId: saleId ?? '', attempt: 1 }),
      payments.at(15_000),
    );
    fired.thenIgnored('NO_NEWS').thenEffects([
      { type: 'send-gateway-request', request: { operation: 'status', priority: 'background' } },
      { type: 'schedule-timer', timer: { kind: 'serial-query', attempt: 2 } },
    ]);
    const [query] = fired.decision.effects;
    expect(query?.type === 'send-gateway-request' && query.request).toMatchObject({
      subjectRequestId: saleId,
      subjectOperation: 'sale',
      clientOrderId: settled.after.status === 'initial' ? '' : settled.after.clientOrderId,
    });
    expect(query?.type === 'send-gateway-request' && 'subjectSerial' in query.request).toBe(false);
  });

  it("the reply naming the sale's serial is recorded as accepted-by-gateway of the sale, and nothing else", () => {
    const settled = lostReplySettledByCallback();
    const saleId = markOf(settled.state)?.requestId;
    const o = settled
      .when(serialReply(aboutTheSale()))
      .then([
        {
          type: 'accepted-by-gateway',
          requestId: saleId,
          operation: 'sale',
          serialNumber: SALE_SERIAL,
          version: settled.state.version + 1,
        },
      ])
      .thenEffects([{ type: 'cancel-timer', timer: 'serial-query' }])
      .thenState({ status: 'approved', captured: 10_000, serialPending: undefined });
    expect(o.after).toMatchObject({ requestSerials: [SALE_SERIAL] });
    // The same reply again (redelivered): the question is closed, nothing more.
    payments
      .given(...settled.events, ...o.decision.events)
      .when(serialReply(aboutTheSale(), saleId))
      .thenIgnored()
      .thenEffects([]);
  });

  it('a sale settled by its status reply (the serial named) asks nothing more', () => {
    payments
      .givenInputs(
        payments.command(saleCommand()),
        payments.result({ kind: 'unknown', reason: 'timeout' }),
      )
      .when((state) =>
        payments.statusReply({
          status: 'approved',
          gatewayOrderId: 'gw-777',
          transactionType: 'sale',
          requestSerial: payments.serialOf(state.inFlight?.requestId ?? ''),
        })(state),
      )
      .then([{ type: 'accepted-by-gateway' }, { type: 'approved' }])
      .thenEffects([
        { type: 'cancel-timer', timer: 'status-poll' },
        { type: 'cancel-timer', timer: 'unknown-alert' },
      ])
      .thenState({ serialPending: undefined });
  });

  it('a return asked meanwhile is written held, the question asked at once and urgent; the reply sends the return, once', () => {
    const settled = lostReplySettledByCallback();
    const asked = settled
      .when(payments.command(returnCommand()))
      .then([{ type: 'operation-requested', operation: 'return', amount: payments.eur(10_000) }])
      .thenEffects([
        { type: 'send-gateway-request', held: true, request: { operation: 'return' } },
        {
          type: 'send-gateway-request',
          request: { operation: 'status', priority: 'urgent', subjectOperation: 'sale' },
        },
        { type: 'schedule-timer', timer: { kind: 'serial-query', attempt: 2, urgent: true } },
      ])
      .thenState({ inFlight: expect.objectContaining({ operation: 'return', held: true }) });
    const returnId = asked.after.inFlight?.requestId;
    const waiting = payments.given(...settled.events, ...asked.decision.events);
    // Another follow-up meanwhile is refused, as for any operation in flight.
    waiting.when(payments.command(voidCommand())).thenRejected('OPERATION_IN_PROGRESS');
    const learnt = waiting
      .when(serialReply(aboutTheSale()))
      .then([{ type: 'accepted-by-gateway', operation: 'sale', serialNumber: SALE_SERIAL }])
      .thenEffectsEqual([
        { type: 'cancel-timer', timer: 'serial-query' },
        { type: 'publish-held-request', requestId: returnId },
      ])
      .thenState({ serialPending: undefined });
    expect(learnt.after.inFlight).toMatchObject({ operation: 'return', stage: 'requested' });
    expect(learnt.after.inFlight?.held).toBeUndefined();
    const released = payments.given(...waiting.events, ...learnt.decision.events);
    // The same reply again, and the query's timer after it: the return is not published twice.
    const saleId = markOf(settled.state)?.requestId ?? '';
    released.when(serialReply(aboutTheSale(), saleId)).thenIgnored().thenEffects([]);
    released
      .when(payments.timer({ kind: 'serial-query', requestId: saleId, attempt: 2 }))
      .thenIgnored('TIMER_OBSOLETE')
      .thenEffects([]);
    // The return then goes on as any: its own reply, its status reply naming it.
    const returned = released.and(payments.acceptedResult()).and(payments.answer('approved'));
    expect(returned.state).toMatchObject({
      status: 'returned',
      requestSerials: [SALE_SERIAL, payments.serialOf(returnId ?? '')],
    });
    expect(moneyEvents(returned.events).map((e) => e.type)).toEqual(['approved', 'returned']);
  });

  it('a reply naming no serial closes the question and releases the held follow-up', () => {
    const waiting = lostReplySettledByCallback().and(payments.command(returnCommand()));
    const returnId = waiting.state.inFlight?.requestId;
    waiting
      .when(serialReply(aboutTheSale({ requestSerial: undefined })))
      .then([{ type: 'accepted-by-gateway', operation: 'sale', gatewayOrderId: 'gw-777' }])
      .thenEffectsEqual([
        { type: 'cancel-timer', timer: 'serial-query' },
        { type: 'publish-held-request', requestId: returnId },
      ])
      .thenState({ serialPending: undefined });
    const event = waiting.when(serialReply(aboutTheSale({ requestSerial: undefined }))).decision
      .events[0];
    expect(event && 'serialNumber' in event).toBe(false);
  });

  it('a refused query changes nothing (asked again); after the attempts and the least time the question closes and the follow-up goes', () => {
    const waiting = lostReplySettledByCallback().and(payments.command(returnCommand()));
    const saleId = markOf(waiting.state)?.requestId ?? '';
    const returnId = waiting.state.inFlight?.requestId;
    waiting
      .when(serialReply({ kind: 'rejected', code: '403', message: 'refused' }))
      .thenIgnored('NO_NEWS')
      .thenEffects([]);
    waiting
      .when(serialReply({ kind: 'unknown', reason: 'timeout' }))
      .thenIgnored('NO_NEWS')
      .thenEffects([]);
    // Held back by the adapter's status budget: asked again at its turn, still urgent.
    waiting
      .when(
        serialReply({
          kind: 'not-sent',
          reason: 'status budget spent',
          retryAt: payments.at(2_000),
        }),
      )
      .thenIgnored('NO_NEWS')
      .thenEffects([{ type: 'schedule-timer', timer: { kind: 'serial-query', urgent: true } }]);
    waiting
      .when(
        payments.timer({
          kind: 'serial-query',
          requestId: saleId,
          attempt: SERIAL_QUERY_ATTEMPTS,
          urgent: true,
        }),
      )
      .thenIgnored('NO_NEWS')
      .thenEffects([
        { type: 'send-gateway-request', request: { operation: 'status', priority: 'urgent' } },
        {
          type: 'schedule-timer',
          timer: { kind: 'serial-query', attempt: SERIAL_QUERY_ATTEMPTS + 1 },
        },
      ]);
    const lastTimer = payments.timer({
      kind: 'serial-query',
      requestId: saleId,
      attempt: SERIAL_QUERY_ATTEMPTS + 1,
    });
    // The attempts are spent before the least time: the timers fired while no answer came (a
    // backlog in front of the adapter) — asked again, the follow-up still held.
    waiting
      .when(lastTimer, payments.at(SERIAL_QUESTION_MIN_MS - 1_000))
      .thenIgnored('NO_NEWS')
      .thenEffects([
        { type: 'send-gateway-request', request: { operation: 'status', priority: 'urgent' } },
        {
          type: 'schedule-timer',
          timer: { kind: 'serial-query', attempt: SERIAL_QUERY_ATTEMPTS + 1 },
        },
      ]);
    const closed = waiting
      .when(lastTimer, payments.at(SERIAL_QUESTION_MIN_MS))
      .then([{ type: 'accepted-by-gateway', requestId: saleId, operation: 'sale' }])
      .thenEffectsEqual([
        { type: 'cancel-timer', timer: 'serial-query' },
        { type: 'publish-held-request', requestId: returnId },
      ])
      .thenState({ serialPending: undefined });
    expect(closed.decision.events[0]).not.toHaveProperty('serialNumber');
    expect(closed.after).not.toHaveProperty('requestSerials');
  });

  it('held back by the adapter again and again (attempt 2 each time), the question still closes at SERIAL_QUESTION_MAX_MS: the follow-up never waits for good', () => {
    const waiting = lostReplySettledByCallback().and(payments.command(returnCommand()));
    const saleId = markOf(waiting.state)?.requestId ?? '';
    const returnId = waiting.state.inFlight?.requestId;
    const heldAgain = payments.timer({
      kind: 'serial-query',
      requestId: saleId,
      attempt: 2,
      urgent: true,
    });
    waiting.when(heldAgain, payments.at(SERIAL_QUESTION_MAX_MS - 1_000)).thenIgnored('NO_NEWS');
    waiting
      .when(heldAgain, payments.at(SERIAL_QUESTION_MAX_MS))
      .then([{ type: 'accepted-by-gateway', requestId: saleId, operation: 'sale' }])
      .thenEffectsEqual([
        { type: 'cancel-timer', timer: 'serial-query' },
        { type: 'publish-held-request', requestId: returnId },
      ]);
  });

  it('a reply about another request of the order (another transaction type, or an earlier serial) is not about the sale', () => {
    const waiting = lostReplySettledByCallback().and(payments.command(returnCommand()));
    waiting
      .when(serialReply(aboutTheSale({ transactionType: 'reversal', requestSerial: 'sn-other' })))
      .thenIgnored('NOT_ABOUT_THIS_OPERATION')
      .thenEffects([]);
  });

  it('a send result arriving after the callback records its serial, never a second outcome or money event', () => {
    // The callback overtook the send's result: no outcome-unknown, settled straight from requested.
    const overtaken = payments.givenInputs(
      payments.command(saleCommand()),
      payments.callback('approved'),
    );
    const saleId = markOf(overtaken.state)?.requestId;
    const late = overtaken
      .when(
        lateSendResult({ kind: 'accepted', gatewayOrderId: 'gw-777', serialNumber: SALE_SERIAL }),
      )
      .then([{ type: 'accepted-by-gateway', requestId: saleId, serialNumber: SALE_SERIAL }])
      .thenEffectsEqual([{ type: 'cancel-timer', timer: 'serial-query' }])
      .thenState({ status: 'approved', captured: 10_000, serialPending: undefined });
    expect(moneyEvents(late.decision.events)).toEqual([]);
    // A late send result saying anything else (unknown, a final report) is not news.
    overtaken
      .when(lateSendResult({ kind: 'unknown', reason: 'timeout' }))
      .thenIgnored()
      .thenEffects([]);
    overtaken
      .when(
        lateSendResult({
          kind: 'accepted',
          report: { status: 'declined' },
        }),
      )
      .thenIgnored()
      .thenEffects([]);
    // Once learnt, a later send result (redelivered) is what it was before: nothing in flight.
    payments
      .given(...overtaken.events, ...late.decision.events)
      .when(
        lateSendResult({ kind: 'accepted', gatewayOrderId: 'gw-777', serialNumber: SALE_SERIAL }),
      )
      .thenIgnored()
      .thenEffects([]);
  });

  it('a preauth settled by its callback: a capture waits the same way', () => {
    const settled = payments.givenInputs(
      payments.command(preauthCommand()),
      payments.result({ kind: 'unknown', reason: 'timeout' }),
      payments.callback('approved'),
    );
    expect(markOf(settled.state)).toMatchObject({ operation: 'preauth' });
    settled
      .when(payments.command(voidCommand()))
      .then([{ type: 'operation-requested', operation: 'void' }])
      .thenEffects([
        { type: 'send-gateway-request', held: true, request: { operation: 'void' } },
        {
          type: 'send-gateway-request',
          request: { operation: 'status', subjectOperation: 'preauth' },
        },
        { type: 'schedule-timer', timer: { kind: 'serial-query' } },
      ]);
  });

  it('a declined sale settled by its callback asks nothing (no follow-up can come)', () => {
    payments
      .givenInputs(
        payments.command(saleCommand()),
        payments.result({ kind: 'unknown', reason: 'timeout' }),
      )
      .when(payments.callback('declined'))
      .then([{ type: 'declined' }])
      .thenEffects([
        { type: 'cancel-timer', timer: 'status-poll' },
        { type: 'cancel-timer', timer: 'unknown-alert' },
      ])
      .thenState({ serialPending: undefined });
  });
});
