/**
 * Reconciliation tells the truth, and settles by evidence — on the flows' real reconciliation
 * (their modules) and deciders:
 *  - a refused status query is "no such order" only when the gateway says so; any other refusal
 *    (403, the adapter's unknown endpoint, an injected one) is `unanswered`, never a mismatch;
 *  - a universal payment form that became a hold is checked as the preauth the gateway made of it;
 *  - a registered schedule's charge the gateway made and nobody heard of is asked for;
 *  - the gateway's final answer about the very request a saga waits for is handed to the saga as
 *    an ordinary status reply, and the saga's own rules settle it with its usual events.
 */
import type { GatewayResult, GatewayStatusReport } from '@payments/contracts';
import { SCHEDULE_ID, returnCommand, saleCommand } from '@payments/contracts/testing';
import * as payments from '../../../test/kits/card-payment.kit';
import * as schedules from '../../../test/kits/recurring-schedule.kit';
import {
  type CheckTime,
  type HistoryEvent,
  type PlannedCheck,
  type RunScope,
  sagaChecks,
  verdict,
} from '../../domain/reconciliation/reconciliation';
import { addMs } from '../../domain/decision';
import { gatewayResultInput } from '../../flows/card-payment/gateway-vocabulary';
import { expectedChargeSubjectId } from '../../flows/recurring-schedule/domain';
import { reconciliationOf } from './reconciled-flows';
import {
  answerOf,
  type CheckRow,
  evidenceFor,
  MAX_HOLDS,
  spentAttempts,
} from './reconciliation-rows';

const HOUR = 3_600_000;
const card = reconciliationOf('card-payment');
const schedule = reconciliationOf('recurring-schedule');
if (card === undefined || schedule === undefined) throw new Error('flows not reconciled');

const RUN_ID = '00000000-0000-4000-8000-0000000000aa';
const CHECK_REQUEST = '00000000-0000-4000-8000-0000000000cc';

/** A planned check as the run stores it. */
const row = (sagaId: string, flow: string, planned: PlannedCheck): CheckRow => ({
  run_id: RUN_ID,
  saga_id: sagaId,
  subject: planned.subject,
  request_id: CHECK_REQUEST,
  flow,
  endpoint_id: '1113',
  expectation: planned.expectation,
  state: 'sent',
  attempts: 1,
  holds: 0,
});

/** The gateway adapter's answer to a check's status query. */
const answerTo = (check: CheckRow, result: GatewayResult['result']): GatewayResult => ({
  requestId: check.request_id,
  paymentId: check.saga_id,
  operation: 'status',
  subjectRequestId: check.request_id,
  attempt: check.attempts,
  result,
  completedAt: '2026-11-26T12:00:00.000Z',
});

const reported = (report: GatewayStatusReport): GatewayResult['result'] => ({
  kind: 'accepted',
  report,
});

describe('reconciliation: a refused status query is no evidence of anything', () => {
  const sagaId = '00000000-0000-4000-8000-000000000001';
  const [planned] = sagaChecks(
    { status: 'approved', clientOrderId: 'order-1', gatewayOrderId: '90001' },
    [],
    {
      kind: 'check',
      expectation: {
        status: 'approved',
        operation: 'sale',
        outcome: 'approved',
        clientOrderId: 'order-1',
        gatewayOrderId: '90001',
      },
    },
    { from: new Date(0), to: new Date('2030-01-01'), createdInWindow: true },
  );
  if (planned === undefined) throw new Error('no check');
  const check = row(sagaId, 'card-payment', planned);
  const found = (result: GatewayResult['result']) => {
    const answer = answerOf(answerTo(check, result));
    if (answer === undefined) throw new Error('no final answer');
    return verdict(check.expectation, answer, card.named);
  };

  it('a 403, an unknown endpoint or an injected refusal: unanswered, not a sale without trace', () => {
    expect(found({ kind: 'rejected', code: '403', message: 'authentication failed' })).toBe(
      'unanswered',
    );
    expect(
      found({ kind: 'rejected', code: 'unknown-endpoint', message: 'no such endpoint here' }),
    ).toBe('unanswered');
  });

  it('"no such order", as the adapter reads it: no trace of an approved sale', () => {
    expect(
      found({ kind: 'rejected', code: '1', message: 'unknown orderid', orderUnknown: true }),
    ).toBe('no-trace-at-gateway');
  });
});

describe('reconciliation: a universal payment form is checked as what the gateway made of it', () => {
  const R1 = '00000000-0000-4000-8000-000000000011';
  const form = (outcome: HistoryEvent): HistoryEvent[] => [
    {
      type: 'operation-requested',
      requestId: R1,
      operation: 'sale',
      amount: { minor: 2_500, currency: 'USD' },
      transactionByGateway: true,
    },
    { type: 'accepted-by-gateway', requestId: R1, serialNumber: 'sn-1' },
    outcome,
  ];
  const order = { status: 'authorized', clientOrderId: 'order-1', gatewayOrderId: '90001' };
  const scope: RunScope = { from: new Date(0), to: new Date('2030-01-01'), createdInWindow: true };
  const checkOf = (history: HistoryEvent[]) => {
    const [planned] = sagaChecks(order, card.operations(history), undefined, scope);
    if (planned === undefined) throw new Error('no check');
    return planned.expectation;
  };
  const approvedAs = (transactionType: string) =>
    ({
      kind: 'report',
      report: {
        status: 'approved',
        transactionType,
        requestSerial: 'sn-1',
        amount: { minor: 2_500, currency: 'USD' },
      },
    }) as const;

  it('a form that became a hold (authorized) is the preauth the gateway names: a match', () => {
    const held = checkOf(form({ type: 'authorized', requestId: R1 }));
    expect(held).toMatchObject({ operation: 'preauth', outcome: 'approved', serial: 'sn-1' });
    expect(verdict(held, approvedAs('preauth'), card.named)).toBe('match');
  });

  it('a form charged as a sale is a sale; one we recorded charged that the gateway says it held is not', () => {
    const charged = checkOf(form({ type: 'approved', requestId: R1 }));
    expect(verdict(charged, approvedAs('sale'), card.named)).toBe('match');
    expect(verdict(charged, approvedAs('preauth'), card.named)).toBe('operation-differs');
  });
});

describe('reconciliation: a sale settled by its callback, then returned, is checked by its own serial (issue #35)', () => {
  const at: CheckTime = { now: new Date(addMs(payments.T0, HOUR)), unknownAlertMs: HOUR };
  const scope: RunScope = { from: new Date(0), to: at.now, createdInWindow: true };
  // The reply lost, the verified callback settles the sale (it names no serial).
  const settled = payments.givenInputs(
    payments.command(saleCommand()),
    payments.result({ kind: 'unknown', reason: 'timeout' }),
    payments.callback('approved'),
  );
  const saleId =
    settled.events[0]?.type === 'operation-requested' ? settled.events[0].requestId : '';
  /** The saga's answer to its serial query: a status reply about the sale by order. */
  const serialReply = (requestSerial: string | undefined) =>
    gatewayResultInput({
      requestId: CHECK_REQUEST,
      paymentId: settled.state.status === 'initial' ? '' : settled.state.paymentId,
      operation: 'status',
      subjectRequestId: saleId,
      attempt: 1,
      result: reported({
        status: 'approved',
        transactionType: 'sale',
        gatewayOrderId: 'gw-777',
        amount: { minor: 10_000, currency: 'EUR' },
        ...(requestSerial === undefined ? {} : { requestSerial }),
      }),
      completedAt: payments.T0,
    });
  /** The return asked at once (held on the question), then its own reply and status reply. */
  const returned = (answer: ReturnType<typeof serialReply>) =>
    settled
      .and(payments.command(returnCommand()))
      .and(answer)
      .and(payments.acceptedResult())
      .and(payments.answer('approved'));
  const plan = (history: ReturnType<typeof returned>) =>
    sagaChecks(
      card.order(history.state),
      card.operations(history.events as unknown as HistoryEvent[]),
      card.latest?.(history.state, at),
      scope,
    ).map((c) => [c.subject, c.expectation.operation, c.expectation.serial]);

  it("the plan has the sale's request check beside the return's, and no order check", () => {
    const history = returned(serialReply('sn-the-sale'));
    const returnSerial =
      history.state.status === 'initial' ? '' : history.state.requestSerials?.[1];
    expect(plan(history)).toEqual([
      [`request:${saleId}`, 'sale', 'sn-the-sale'],
      [expect.stringMatching(/^request:/), 'return', returnSerial],
    ]);
  });

  it('the question closed without a serial: only the return is asked about (its own serial; no order check asks it again)', () => {
    expect(plan(returned(serialReply(undefined)))).toEqual([
      [expect.stringMatching(/^request:/), 'return', expect.any(String)],
    ]);
  });
});

describe('reconciliation settles by evidence: the answer enters the saga as a status reply would', () => {
  const at: CheckTime = { now: new Date(addMs(payments.T0, 2 * HOUR)), unknownAlertMs: HOUR };
  const scope: RunScope = { from: new Date(0), to: at.now, createdInWindow: true };
  // A sale whose reply was lost (and whose callback never came): unknown for two hours.
  const lost = payments.givenInputs(
    payments.command(saleCommand()),
    payments.result({ kind: 'unknown', reason: 'connection lost after sending' }),
  );
  const state = lost.state;
  if (state.status === 'initial' || state.inFlight === undefined) throw new Error('not in flight');
  const waitedFor = state.inFlight.requestId;
  const [planned] = sagaChecks(card.order(state), [], card.latest?.(state, at), scope);
  if (planned === undefined) throw new Error('no check');
  const check = row(state.paymentId, 'card-payment', planned);
  const approved: GatewayStatusReport = {
    status: 'approved',
    transactionType: 'sale',
    gatewayOrderId: '90001',
    amount: { minor: 10_000, currency: 'EUR' },
    approvalCode: '424242',
  };

  it('the check names the request the saga waits for; the final answer is evidence for it', () => {
    expect(check.expectation).toMatchObject({ outcome: 'unknown', requestId: waitedFor });
    const result = answerTo(check, reported(approved));
    const answer = answerOf(result);
    if (answer === undefined) throw new Error('no final answer');
    expect(verdict(check.expectation, answer, card.named)).toBe('handed-to-saga');
    expect(evidenceFor(check, result, answer)).toEqual({
      ...result,
      paymentId: state.paymentId,
      subjectRequestId: waitedFor,
    });
  });

  it("the saga's own rules settle it with its usual events (the amount checked as for a poll)", () => {
    const result = answerTo(check, reported(approved));
    const evidence = evidenceFor(check, result, answerOf(result) ?? { kind: 'none' });
    if (evidence === undefined) throw new Error('no evidence');
    lost
      .when(gatewayResultInput(evidence), at.now.toISOString())
      .then([
        { type: 'approved', requestId: waitedFor, amount: { minor: 10_000, currency: 'EUR' } },
      ])
      .thenState({ status: 'approved' });
    // Another amount than asked: no success event, the saga's amount-mismatch alert instead.
    const other = answerTo(
      check,
      reported({ ...approved, amount: { minor: 9_000, currency: 'EUR' } }),
    );
    const odd = evidenceFor(check, other, answerOf(other) ?? { kind: 'none' });
    if (odd === undefined) throw new Error('no evidence');
    lost
      .when(gatewayResultInput(odd), at.now.toISOString())
      .then([{ type: 'outcome-unknown', alert: true, concern: 'amount-mismatch' }]);
  });

  it('an unknown outcome is checked by every run that reads the saga, not only its creation window', () => {
    const later: RunScope = { ...scope, createdInWindow: false };
    expect(sagaChecks(card.order(state), [], card.latest?.(state, at), later)).toEqual([
      expect.objectContaining({
        subject: 'order',
        expectation: expect.objectContaining({
          outcome: 'unknown',
          requestId: waitedFor,
        }) as unknown,
      }),
    ]);
  });

  it('no evidence: a non-final answer, a refusal, an answer about another request', () => {
    for (const result of [
      reported({ status: 'processing', transactionType: 'sale' }),
      { kind: 'rejected', code: '403', message: 'authentication failed' } as const,
    ]) {
      const answered = answerTo(check, result);
      const answer = answerOf(answered);
      if (answer !== undefined) expect(evidenceFor(check, answered, answer)).toBeUndefined();
    }
    const bySerial = row(state.paymentId, 'card-payment', {
      ...planned,
      expectation: { ...planned.expectation, serial: 'sn-ours' },
    });
    const aboutAnother = answerTo(bySerial, reported({ ...approved, requestSerial: 'sn-other' }));
    const answer = answerOf(aboutAnother);
    if (answer === undefined) throw new Error('no final answer');
    expect(evidenceFor(bySerial, aboutAnother, answer)).toBeUndefined();
  });

  it('a saga that reported approved and a gateway that says declined: a mismatch, nothing handed', () => {
    const settled = row(state.paymentId, 'card-payment', {
      subject: 'order',
      expectation: { ...planned.expectation, outcome: 'approved', status: 'approved' },
    });
    const declined = answerTo(settled, reported({ status: 'declined', transactionType: 'sale' }));
    const answer = answerOf(declined);
    if (answer === undefined) throw new Error('no final answer');
    expect(verdict(settled.expectation, answer, card.named)).toBe('reported-charged-but-not');
    expect(evidenceFor(settled, declined, answer)).toBeUndefined();
  });
});

describe("reconciliation covers a registered schedule's expected charges", () => {
  // Cycle 0 is due 2026-01-31 09:00 Berlin; the gateway charged it, its callbacks all lost.
  const registered = schedules.registered();
  const state = registered.state;
  const now = new Date('2026-02-10T00:00:00.000Z');
  const at: CheckTime = { now, unknownAlertMs: HOUR };
  const scope: RunScope = { from: new Date('2026-01-01'), to: now, createdInWindow: false };

  it('a cycle due in the window and not seen is asked for by its client order id', () => {
    const checks = schedule.awaited?.(state, at, scope) ?? [];
    expect(checks).toEqual([
      {
        subject: 'charge:expected-0',
        expectation: expect.objectContaining({
          outcome: 'unknown',
          requestId: expectedChargeSubjectId(SCHEDULE_ID, 0),
          clientOrderId: `${SCHEDULE_ID}-1`,
        }) as unknown,
      },
    ]);
    expect(checks[0]?.expectation).not.toHaveProperty('gatewayOrderId');
    // Recorded meanwhile (its callback came): nothing left to ask for.
    const heard = registered.and(schedules.chargeCallback(1, '1000007'), '2026-02-01T08:00:00Z');
    expect(schedule.awaited?.(heard.state, at, scope)).toEqual([]);
  });

  it('a scheduled run finds it: the run whose window holds the time it has been expected for the alert age', () => {
    // Cycle 0 due 2026-01-31 08:00Z, a day's grace, an hour's alert age: 2026-02-01 09:00Z.
    const hourly = (from: string, ranAt: string) =>
      schedule.awaited?.(
        state,
        { now: new Date(ranAt), unknownAlertMs: HOUR },
        {
          from: new Date(from),
          to: new Date(Date.parse(from) + HOUR),
          createdInWindow: false,
        },
      ) ?? [];
    // Ran a quarter of an hour after its window ended (RECONCILIATION_SETTLE_SECONDS).
    expect(hourly('2026-01-31T08:00:00Z', '2026-01-31T09:15:00Z')).toEqual([]);
    expect(hourly('2026-02-01T08:00:00Z', '2026-02-01T09:15:00Z')).toEqual([]);
    expect(hourly('2026-02-01T09:00:00Z', '2026-02-01T10:15:00Z')).toEqual([
      expect.objectContaining({ subject: 'charge:expected-0' }),
    ]);
  });

  it('the gateway charged it: handed to the schedule, recorded as a charge found', () => {
    const [planned] = schedule.awaited?.(state, at, scope) ?? [];
    if (planned === undefined) throw new Error('no check');
    const check = row(SCHEDULE_ID, 'recurring-schedule', planned);
    const result = answerTo(check, {
      kind: 'accepted',
      gatewayOrderId: '1000042',
      report: {
        status: 'approved',
        gatewayOrderId: '1000042',
        transactionType: 'sale',
        amount: { minor: 999, currency: 'EUR' },
      },
    });
    const evidence = evidenceFor(check, result, answerOf(result) ?? { kind: 'none' });
    if (evidence === undefined) throw new Error('no evidence');
    registered.when({ kind: 'gateway-result', result: evidence }, now.toISOString()).then([
      { type: 'gateway-charge-reported', cycle: 0, gatewayOrderId: '1000042' },
      { type: 'gateway-cycle-charged', cycle: 0, gatewayOrderId: '1000042' },
    ]);
  });
});

describe('attempts a run spends', () => {
  it('counts only the attempts the gateway could have answered, and stops waiting after MAX_HOLDS', () => {
    expect(spentAttempts({ attempts: 5, holds: 0 })).toBe(5);
    expect(spentAttempts({ attempts: 5, holds: 4 })).toBe(1);
    expect(spentAttempts({ attempts: MAX_HOLDS + 1, holds: MAX_HOLDS })).toBe(
      Number.POSITIVE_INFINITY,
    );
  });
});
