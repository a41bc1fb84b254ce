import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DayClosedEvent } from '@payments/contracts';
import { DayTally } from '@payments/sdk';
import { type Close, type CloseReport, closeDay } from '../../apps/cli/src/commands/close';
import { PaymentStack, SANDBOX_MERCHANT } from '../../scripts/stack/payment-stack';
import { oneStepPayout, transfer } from '../../scripts/stack/payout-commands';
import { capturedAndReturnedTwice } from '../support/e2e-stack';
import { adminTokens, type E2eStack, startE2eStack } from '../support/e2e-stack';

/**
 * The day close ties out against the gateway (issue #35 item 3), on the stack. One merchant's day
 * of mixed traffic across the money flows: a sale; a preauth, a partial capture and two partial
 * returns; a payout paid; a transfer; a payout refused by the day's limit (the payout and the
 * transfer took most of it); a sale left unknown (the gateway charged another amount than asked)
 * settled "done at" the gateway's amount by two people; a return the gateway never received, left
 * unknown with its case open. Once the day is over the operator closes it: the close report (the
 * day's reconciliation run, every operation asked about by serial) is `open-with-exceptions`,
 * naming the unknown return and its open case, its totals — ours and the gateway's — equal to the
 * sandbox's ledger of those orders. Two people decide the return "not done": that settlement
 * starts the report's next version by itself, `closed`; its CSV files (the CLI's export) parse back
 * to the same numbers, and the day-closed event's counts equal what this consumer received (the
 * SDK's DayTally says so). Then a second charge is planted in the sandbox's ledger under the
 * sale's order: the next version (an operator's re-run) is `open-with-exceptions`, naming that
 * sale (paid twice); every version is kept.
 */
const ENDPOINT = SANDBOX_MERCHANT.plainEndpoint;
/** The window after which the gateway's silence about a request reads as no trace. */
const NEVER_RECEIVED_SECONDS = 3;
const ALICE = `alice-${randomUUID()}`;
const BOB = `bob-${randomUUID()}`;

let e2e: E2eStack;
let stack: PaymentStack;
let folder: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), 'close-report-'));
  e2e = await startE2eStack('close_report', {
    env: {
      orchestrator: {
        TEST_CONTROLS_ENABLED: 'true',
        // The operator closes the day; the worker still writes the reports (every half second).
        DAY_CLOSE_ENABLED: 'false',
        DAY_CLOSE_TICK_MS: '500',
        CASE_SWEEP_MS: '300',
        NEVER_RECEIVED_RESEND_SECONDS: String(NEVER_RECEIVED_SECONDS),
        RECONCILIATION_TICK_MS: '250',
        PAYOUT_LIMITS: JSON.stringify({
          default: { maxMinor: 1_000_000, dailyLimitMinor: 10_000_000 },
          endpoints: { [ENDPOINT]: { dailyLimitMinor: 10_000 } },
        }),
        ADMIN_TOKENS: adminTokens([
          { name: 'alice', role: 'operator', scope: 'all', token: ALICE },
          { name: 'bob', role: 'approver', scope: 'all', token: BOB },
        ]),
      },
      'gateway-adapter': {
        GATEWAY_RESPONSE_TIMEOUT_MS: '4000',
        // The injected faults would open the endpoint breaker (its own suite's subject).
        GATEWAY_BREAKER_FAILURES: '1000',
      },
    },
  });
  stack = e2e.stack;
});

afterAll(async () => {
  await e2e?.stop();
  if (folder !== undefined) await rm(folder, { recursive: true, force: true });
});

const admin = (method: 'GET' | 'POST', route: string, token: string, body?: unknown) =>
  stack.admin<unknown>(method, route, token, body);

/** Waits until `probe` answers, asking again every 250 ms. */
async function until<T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The latest close report of the day once written (no longer reconciling), version `version`. */
async function writtenReport(
  day: string,
  version: number,
  endpointId: string = ENDPOINT,
): Promise<CloseReport> {
  return until(async () => {
    const { status, body } = await admin(
      'GET',
      `/admin/days/${day}/reports?endpointId=${endpointId}`,
      ALICE,
    );
    if (status !== 200) throw new Error(`GET reports: ${status} ${JSON.stringify(body)}`);
    const [report] = body as CloseReport[];
    return report !== undefined && report.version === version && report.state !== 'reconciling'
      ? report
      : undefined;
  }, `close report v${version} of ${day}`);
}

/** The case of a saga, once the case worker opened it. */
async function caseOf(sagaId: string): Promise<string> {
  const found = await until(async () => {
    const { body } = await admin('GET', '/admin/cases', ALICE);
    return (body as Array<Record<string, unknown>>).find((c) => c.sagaId === sagaId);
  }, `the case of ${sagaId}`);
  return String(found.caseId);
}

/** A CSV file's rows as objects by its header (the export quotes no field here). */
function parseCsv(text: string): Array<Record<string, string>> {
  const [header, ...rows] = text.trim().split('\n');
  const columns = (header ?? '').split(',');
  return rows.map((row) => {
    const values = row.split(',');
    return Object.fromEntries(columns.map((c, i) => [c, values[i] ?? '']));
  });
}

describe("a merchant's day closed and tied out against the gateway", () => {
  it('open with an unknown return and its case; decided: the next version closed, report totals = sandbox ledger, CSV parses back, day-closed = what the consumer received; a planted second charge opens the next version naming the sale', async () => {
    // A sale.
    const sale = stack.sale({ amountMinor: 3_000 });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['approved'], 60_000);
    // A preauth, a partial capture and two partial returns.
    const paymentId = await capturedAndReturnedTwice(stack);
    // A payout and a transfer take 7,200 of the day's 10,000: a payout of 6,000 is refused.
    const payout = oneStepPayout({ amountMinor: 4_500 });
    await stack.sendRaw(payout);
    await stack.events.waitForPayout(payout.payoutId, ['paid-out'], 60_000);
    const moved = transfer({ amountMinor: 2_700 });
    await stack.sendRaw(moved);
    await stack.events.waitForPayout(moved.transferId, ['transferred'], 60_000);
    const refused = oneStepPayout({ amountMinor: 6_000 });
    await stack.sendRaw(refused);
    const refusal = await stack.events.waitForPayout(
      refused.payoutId,
      ['payout-refused', 'paid-out', 'payout-declined', 'payout-failed'],
      60_000,
    );
    expect(refusal.event).toMatchObject({
      type: 'payout-refused',
      reason: 'DAILY_PAYOUT_LIMIT_EXCEEDED',
    });
    // A sale the gateway charged at 9,000 instead of 10,000: unknown (amount mismatch), a case,
    // decided "done at 9,000" by two people.
    const decided = stack.sale({ cvv: '123', amountMinor: 10_000 });
    await stack.controls.addFault({
      clientOrderId: decided.paymentId,
      operation: 'SALE',
      processedAmountMinor: 9_000,
    });
    await stack.send(decided);
    await stack.events.waitFor(
      decided.paymentId,
      (e) => e.type === 'outcome-unknown' && e.alert && e.concern === 'amount-mismatch',
      90_000,
    );
    const caseId = await caseOf(decided.paymentId);
    const proposed = await admin('POST', `/admin/cases/${caseId}/propose`, ALICE, {
      decision: 'done',
      amount: { minor: 9_000, currency: 'USD' },
      amountWhy: 'the gateway charged 9,000 (its status reply); the order asked 10,000',
      reason: 'the acquirer statement shows 9,000',
    });
    expect(proposed.status).toBe(200);
    expect((await admin('POST', `/admin/cases/${caseId}/approve`, BOB)).status).toBe(200);
    await stack.events.waitForType(decided.paymentId, ['settled-by-decision'], 60_000);
    // A sale whose return the gateway never receives (the connection closes unanswered): unknown,
    // alerted no-trace, a case opened.
    const lost = stack.sale({ cvv: '123', amountMinor: 5_000 });
    await stack.send(lost);
    await stack.events.waitForType(lost.paymentId, ['approved'], 60_000);
    await stack.controls.addFault({
      clientOrderId: lost.paymentId,
      operation: 'RETURN',
      failBefore: 'drop',
      times: 1,
    });
    await stack.send(stack.return(lost.paymentId, 2_000));
    await stack.events.waitFor(
      lost.paymentId,
      (e) => e.type === 'outcome-unknown' && e.alert && e.concern === 'no-trace',
      90_000,
    );
    const lostCase = await caseOf(lost.paymentId);

    // The merchant's day (UTC) ends; the operator closes it.
    const day = stack.events.distinctEventsOf(sale.paymentId)[0].occurredAt.slice(0, 10);
    const midnight = new Date(`${day}T00:00:00.000Z`).getTime() + 24 * 3_600_000;
    await stack.advanceOrchestratorClock(Math.ceil((midnight - Date.now()) / 1000) + 60);
    const closed = await admin('POST', `/admin/days/${day}/close`, ALICE, { endpointId: ENDPOINT });
    expect(closed.status).toBe(200);
    const [answer] = closed.body as Close[];
    expect(answer).toMatchObject({ day, fresh: true, count: 7 });
    expect(answer?.report).toMatchObject({ version: 1, trigger: 'close', requestedBy: 'alice' });

    // Open with exceptions: the return still unknown, its case open; nothing else.
    const opening = await writtenReport(day, 1);
    expect(opening.state).toBe('open-with-exceptions');
    expect(opening.exceptions?.map((e) => [e.kind, e.sagaId, e.operation, e.caseId])).toEqual([
      ['case-open', lost.paymentId, undefined, lostCase],
      ['unknown', lost.paymentId, 'return', lostCase],
    ]);
    // Two people decide the return "not done": the settlement starts the next version by itself.
    expect(
      (
        await admin('POST', `/admin/cases/${lostCase}/propose`, ALICE, {
          decision: 'not-done',
          reason: 'the gateway shows no trace of the return; no refund at the acquirer',
        })
      ).status,
    ).toBe(200);
    expect((await admin('POST', `/admin/cases/${lostCase}/approve`, BOB)).status).toBe(200);
    await stack.events.waitForType(lost.paymentId, ['settled-by-decision'], 60_000);
    const first = await writtenReport(day, 2);
    expect([first.state, first.trigger, first.exceptions]).toEqual(['closed', 'settlement', []]);
    // Its totals, ours and the gateway's, equal the sandbox's ledger of these orders.
    const orders = [
      sale.paymentId,
      paymentId,
      payout.payoutId,
      moved.transferId,
      refused.payoutId,
      decided.paymentId,
      lost.paymentId,
    ];
    const ledgerOf = async () =>
      (await stack.controls.ledger()).entries.filter((e) => orders.includes(e.clientOrderId));
    const sum = (entries: Awaited<ReturnType<typeof ledgerOf>>, movement: string) =>
      entries.filter((e) => e.movement === movement).reduce((n, e) => n + e.amountMinor, 0);
    const ledger = await ledgerOf();
    const total = (report: CloseReport, side: 'oursMinor' | 'gatewayMinor', ...types: string[]) =>
      (report.totals ?? [])
        .filter((t) => t.currency === 'USD' && types.includes(t.type))
        .reduce((n, t) => n + Number(t[side]), 0);
    const expected = {
      charged: sum(ledger, 'charged'),
      captured: sum(ledger, 'captured'),
      refunded: sum(ledger, 'refunded'),
      paidOut: sum(ledger, 'paid-out'),
      transferred: sum(ledger, 'transferred'),
    };
    expect(expected).toEqual({
      charged: 17_000,
      captured: 6_000,
      refunded: 3_000,
      paidOut: 4_500,
      transferred: 2_700,
    });
    for (const side of ['oursMinor', 'gatewayMinor'] as const)
      expect({
        side,
        charged: total(first, side, 'approved', 'settled-by-decision'),
        captured: total(first, side, 'captured'),
        refunded: total(first, side, 'returned'),
        paidOut: total(first, side, 'paid-out'),
        transferred: total(first, side, 'transferred'),
      }).toEqual({ side, ...expected });
    expect(first.lines?.find((l) => l.sagaId === decided.paymentId)).toMatchObject({
      type: 'settled-by-decision',
      oursMinor: '9000',
      status: 'decided',
      caseId,
    });

    // The CLI's export: two CSV files that parse back to the report's numbers.
    const lines: string[] = [];
    await closeDay(
      {
        day,
        endpoint: ENDPOINT,
        show: true,
        export: folder,
        adminUrl: stack.urls.orchestrator,
        token: ALICE,
      },
      (line) => lines.push(line),
    );
    expect(lines).toHaveLength(2);
    const totalsCsv = parseCsv(
      await readFile(join(folder, `close-${day}-${ENDPOINT}-totals.csv`), 'utf8'),
    );
    expect(
      totalsCsv.map((r) => ({
        currency: r.currency,
        type: r.type,
        count: Number(r.count),
        oursMinor: r.ours_minor,
        gatewayMinor: r.gateway_minor,
        differenceMinor: r.difference_minor,
      })),
    ).toEqual(first.totals);
    expect(totalsCsv.every((r) => r.state === 'closed' && r.version === '2')).toBe(true);
    const linesCsv = parseCsv(
      await readFile(join(folder, `close-${day}-${ENDPOINT}-lines.csv`), 'utf8'),
    );
    expect(linesCsv.map((r) => [r.saga_id, r.type, r.ours_minor, r.gateway_minor])).toEqual(
      (first.lines ?? []).map((l) => [l.sagaId, l.type, l.oursMinor, l.gatewayMinor ?? '']),
    );
    expect(linesCsv.reduce((n, r) => n + Number(r.ours_minor), 0)).toBe(
      (first.totals ?? []).reduce((n, t) => n + Number(t.oursMinor), 0),
    );

    // The day-closed event's counts equal what this consumer received: DayTally says so.
    const ours = () =>
      stack.events.dayClosed.find(
        // Every stack on this worker's broker closes the same merchant's day under the same
        // closeId (derived from endpoint and day): ours is the one our close answered with.
        (e) => e.closeId === answer?.closeId && e.occurredAt === answer?.occurredAt,
      );
    const closedEvent: DayClosedEvent = await until(
      async () => ours(),
      'the day-closed event',
      60_000,
    );
    const received = [
      ...stack.events.distinctEventsOf(sale.paymentId),
      ...stack.events.distinctEventsOf(paymentId),
      ...stack.events.distinctEventsOf(decided.paymentId),
      ...stack.events.distinctEventsOf(lost.paymentId),
      ...stack.events.payoutEventsOf(payout.payoutId).map((r) => r.event),
      ...stack.events.payoutEventsOf(moved.transferId).map((r) => r.event),
      ...stack.events.payoutEventsOf(refused.payoutId).map((r) => r.event),
    ];
    const tally = new DayTally();
    for (const event of received) tally.add(event);
    expect(tally.check(closedEvent).explanation).toEqual([]);
    expect(closedEvent.count).toBe(7);

    // The gateway charges the sale a second time under its order, telling nobody: the next
    // version is open with exceptions, naming the sale; the first is kept.
    const [orderId] = await stack.controls.orderIds(sale.paymentId);
    if (orderId === undefined) throw new Error('the sale has no sandbox order');
    await stack.controls.chargeAgain(orderId);
    const rerun = await admin('POST', `/admin/days/${day}/close`, ALICE, {
      endpointId: ENDPOINT,
      rerun: true,
    });
    expect(rerun.status).toBe(200);
    const second = await writtenReport(day, 3);
    expect(second).toMatchObject({ state: 'open-with-exceptions', trigger: 'rerun' });
    // The run's mismatch opened a case (issue #33): the report names both, the case and the line.
    expect(second.exceptions).toEqual([
      expect.objectContaining({
        kind: 'case-open',
        concern: 'reconciliation-mismatch',
        sagaId: sale.paymentId,
      }),
      expect.objectContaining({
        kind: 'mismatched',
        sagaId: sale.paymentId,
        operation: 'sale',
        verdict: 'paid-twice',
      }),
    ]);
    // The gateway's side still equals its ledger (which now holds the second charge).
    expect(total(second, 'gatewayMinor', 'approved', 'settled-by-decision')).toBe(
      sum(await ledgerOf(), 'charged'),
    );
    expect(total(second, 'oursMinor', 'approved', 'settled-by-decision')).toBe(17_000);
    const all = await admin(
      'GET',
      `/admin/days/${day}/reports?endpointId=${ENDPOINT}&versions=all`,
      ALICE,
    );
    expect((all.body as CloseReport[]).map((r) => [r.version, r.state])).toEqual([
      [1, 'open-with-exceptions'],
      [2, 'closed'],
      [3, 'open-with-exceptions'],
    ]);
  }, 600_000);
});

describe('a sale settled by its callback, its reply lost, returned at once (issue #35)', () => {
  it("the day closes `closed`: the sale's line matched by the serial it learnt after its callback", async () => {
    // Its own endpoint: the day above (its close, its cases) is not this one's.
    const endpointId = SANDBOX_MERCHANT.paymentFormPreauthEndpoint;
    const sale = stack.sale({ endpointId, amountMinor: 4_000 });
    // The sale's reply is lost after the gateway charged it; its callback comes. Status replies
    // are slow (2 s), so the callback — which names no serial — settles it, not a poll.
    await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      operation: 'SALE',
      failAfter: 'drop',
      times: 1,
    });
    await stack.controls.addFault({
      clientOrderId: sale.paymentId,
      operation: 'STATUS',
      latencyMs: 2_000,
    });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['approved'], 60_000);
    // Returned at once: the return waits for the sale's serial (held), then goes out.
    await stack.send({ ...stack.return(sale.paymentId), merchant: { endpointId } });
    const returned = await stack.events.waitForType(sale.paymentId, ['returned'], 90_000);
    const history = stack.events.distinctEventsOf(sale.paymentId);
    const saleRequest = history[0]?.type === 'operation-requested' ? history[0].requestId : '';
    const approvedAt = history.findIndex((e) => e.type === 'approved');
    const saleAccepted = history.findIndex(
      (e) => e.type === 'accepted-by-gateway' && e.requestId === saleRequest,
    );
    // Settled by the callback (no serial before the outcome), the serial learnt afterwards.
    expect(history.slice(0, approvedAt + 1).map((e) => e.type)).toEqual([
      'operation-requested',
      'outcome-unknown',
      'approved',
    ]);
    expect(saleAccepted).toBeGreaterThan(approvedAt);
    expect(history[saleAccepted]).toMatchObject({ serialNumber: expect.any(String) });
    // One charge, one refund: the held return was sent once.
    const ledger = (await stack.controls.ledger()).entries.filter(
      (e) => e.clientOrderId === sale.paymentId,
    );
    expect(ledger.map((e) => [e.movement, e.amountMinor])).toEqual([
      ['charged', 4_000],
      ['refunded', 4_000],
    ]);

    // The day (the orchestrator's: the test above moved its clock) ends; the operator closes it.
    const day = returned.event.occurredAt.slice(0, 10);
    const midnight = new Date(`${day}T00:00:00.000Z`).getTime() + 24 * 3_600_000;
    await stack.advanceOrchestratorClock(
      Math.ceil((midnight - Date.parse(returned.event.occurredAt)) / 1000) + 120,
    );
    const closed = await admin('POST', `/admin/days/${day}/close`, ALICE, { endpointId });
    expect(closed.status).toBe(200);
    const report = await writtenReport(day, 1, endpointId);
    expect([report.state, report.exceptions]).toEqual(['closed', []]);
    expect(report.lines?.find((l) => l.requestId === saleRequest)).toMatchObject({
      type: 'approved',
      verdict: 'match',
    });
  }, 300_000);
});
