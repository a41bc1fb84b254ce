import { randomUUID } from 'node:crypto';
import type { DayClosedEvent } from '@payments/contracts';
import { DayTally } from '@payments/sdk';
import { Client } from 'pg';
import { PaymentStack, SANDBOX_MERCHANT } from '../../scripts/stack/payment-stack';
import { oneStepPayout } from '../../scripts/stack/payout-commands';
import { capturedAndReturnedTwice } from '../support/e2e-stack';
import { adminTokens, type E2eStack, startE2eStack } from '../support/e2e-stack';

/**
 * Finance closes a day (issue #35) on the stack: mixed traffic on one merchant — a sale, a preauth
 * with a partial capture and two partial returns, a one-step payout — posts a journal whose
 * balances per account equal the sandbox's ledger of those orders; once the merchant's day is over
 * (its zone: Europe/Berlin here, the orchestrator's clock moved past its midnight) the operator's
 * close publishes `day-closed` on the events topic, and the SDK's DayTally, fed what this consumer
 * received, agrees with it (and names what a lossy consumer missed).
 */
const ENDPOINT = SANDBOX_MERCHANT.plainEndpoint;
const ZONE = 'Europe/Berlin';
const OPERATOR = `op-${randomUUID()}`;

let e2e: E2eStack;
let stack: PaymentStack;

beforeAll(async () => {
  e2e = await startE2eStack('finance', {
    env: {
      orchestrator: {
        TEST_CONTROLS_ENABLED: 'true',
        MERCHANT_TIME_ZONES: JSON.stringify({ [ENDPOINT]: ZONE }),
        // The operator closes the day here; the scheduled close is the same service.
        DAY_CLOSE_ENABLED: 'false',
        ADMIN_TOKENS: adminTokens([{ name: 'finance', role: 'operator', token: OPERATOR }]),
      },
    },
  });
  stack = e2e.stack;
});

afterAll(async () => {
  await e2e?.stop();
});

async function query<Row>(text: string, values: unknown[] = []): Promise<Row[]> {
  const client = new Client({ connectionString: e2e.orchestratorDb.url });
  await client.connect();
  try {
    return (await client.query(text, values)).rows as Row[];
  } finally {
    await client.end();
  }
}

/** The merchant's calendar day of an instant in its zone (YYYY-MM-DD). */
const dayIn = (at: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: ZONE }).format(new Date(at));

describe("a merchant's day closed", () => {
  it('journal = sandbox ledger per account; day-closed counts = what the consumer received (DayTally)', async () => {
    // A sale.
    const sale = stack.sale({ amountMinor: 3_000 });
    await stack.send(sale);
    await stack.events.waitForType(sale.paymentId, ['approved'], 60_000);
    // A preauth, a partial capture and two partial returns.
    const paymentId = await capturedAndReturnedTwice(stack);
    // A one-step payout.
    const payout = oneStepPayout({ amountMinor: 4_500 });
    await stack.sendRaw(payout);
    await stack.events.waitForPayout(payout.payoutId, ['paid-out'], 60_000);

    // The journal's balances per account equal the sandbox's ledger of these orders.
    const orders = [sale.paymentId, paymentId, payout.payoutId];
    const ledger = (await stack.controls.ledger()).entries.filter((e) =>
      orders.includes(e.clientOrderId),
    );
    const moved = (movement: string) =>
      ledger.filter((e) => e.movement === movement).reduce((n, e) => n + e.amountMinor, 0);
    const balances = await query<{ account: string; currency: string; balance: string }>(
      `SELECT account, currency, sum(amount)::text AS balance FROM journal_lines
        WHERE saga_id = ANY($1) GROUP BY account, currency HAVING sum(amount) <> 0
        ORDER BY account`,
      [orders],
    );
    const account = (kind: string) => `merchant:${ENDPOINT}:${kind}`;
    const receivable = moved('charged') + moved('captured') - moved('voided');
    expect(balances).toEqual(
      [
        { account: account('captured-receivable'), currency: 'USD', balance: String(receivable) },
        { account: account('payouts-sent'), currency: 'USD', balance: String(moved('paid-out')) },
        {
          account: account('refunds-payable'),
          currency: 'USD',
          balance: String(moved('refunded')),
        },
        {
          account: 'world',
          currency: 'USD',
          balance: String(-(receivable + moved('paid-out') + moved('refunded'))),
        },
      ].sort((a, b) => a.account.localeCompare(b.account)),
    );
    expect([receivable, moved('refunded'), moved('paid-out')]).toEqual([9_000, 3_000, 4_500]);
    // Every entry balances (the database refuses one that does not; this reads it back).
    expect(
      await query(
        `SELECT event_id FROM journal_lines GROUP BY event_id, currency HAVING sum(amount) <> 0`,
      ),
    ).toEqual([]);

    // The merchant's day ends (Berlin's midnight, then a minute): the operator closes it.
    const first = stack.events.distinctEventsOf(sale.paymentId)[0];
    const day = dayIn(first.occurredAt);
    const midnight = new Date(`${day}T00:00:00.000Z`).getTime() + 24 * 3_600_000; // UTC midnight after
    // Berlin's midnight is at most two hours before UTC's: a day and a minute after UTC's is past it.
    await stack.advanceOrchestratorClock(Math.ceil((midnight - Date.now()) / 1000) + 60);
    const response = await fetch(`${stack.urls.orchestrator}/admin/days/${day}/close`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OPERATOR}`, 'content-type': 'application/json' },
      body: JSON.stringify({ endpointId: ENDPOINT }),
    });
    expect(response.status).toBe(200);
    const [answer] = (await response.json()) as Array<DayClosedEvent & { fresh: boolean }>;
    expect(answer).toMatchObject({
      day,
      timeZone: ZONE,
      fresh: true,
      count: 5,
      totals: [
        { eventType: 'approved', currency: 'USD', count: 1, sumMinor: '3000' },
        { eventType: 'captured', currency: 'USD', count: 1, sumMinor: '6000' },
        { eventType: 'paid-out', currency: 'USD', count: 1, sumMinor: '4500' },
        { eventType: 'returned', currency: 'USD', count: 2, sumMinor: '3000' },
      ],
    });

    // The day-closed event on the topic; the consumer's tally of what it received agrees.
    // (The day-close worker may also have closed yesterday for this merchant meanwhile: the
    // event of this day is the one to judge.)
    const ours = () =>
      stack.events.dayClosed.find(
        // Every stack on this worker's broker closes the same merchant's day under the same
        // closeId (derived from endpoint and day): ours is the one our close answered with.
        (e) => e.closeId === answer?.closeId && e.occurredAt === answer?.occurredAt,
      );
    const deadline = Date.now() + 60_000;
    while (ours() === undefined && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = ours();
    expect(closed).toEqual(
      expect.objectContaining({ day, lastMerchantSeq: 5, closeId: answer.closeId }),
    );
    // What this merchant's consumer received of this test's payments (the worker's broker also
    // holds the events of the suites it ran before, of the same endpoint and day).
    const received = [
      ...stack.events.distinctEventsOf(sale.paymentId),
      ...stack.events.distinctEventsOf(paymentId),
      ...stack.events.payoutEventsOf(payout.payoutId).map((r) => r.event),
    ];
    const tally = new DayTally();
    for (const event of received) tally.add(event);
    expect(tally.check(closed!).explanation).toEqual([]);
    // A consumer that lost the capture is told so: which type and currency, which number.
    const lossy = new DayTally();
    for (const event of received.filter((e) => e.type !== 'captured')) lossy.add(event);
    const verdict = lossy.check(closed!);
    expect(verdict.differences.map((d) => `${d.eventType} ${d.currency}`)).toEqual([
      'captured USD',
    ]);
    expect(verdict.missingSeqs).toHaveLength(1);
  });
});
