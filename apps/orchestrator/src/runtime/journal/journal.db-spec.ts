/**
 * The journal's lines are written in the transaction of the events they post: a unit of work
 * that rolls back leaves neither the events nor their lines, and an entry that does not balance is
 * refused at commit (the deferred constraint trigger of migration 1769890000000).
 */
import { randomUUID } from 'node:crypto';
import { canonicalJson } from '../../domain';
import type { CommandCatalogue, Flow, SagaEvent } from '../flow';
import type { RuntimeInput } from '../saga-runtime';
import { orchestratorFixture, testFlowParts } from '../../../test/kits/orchestrator.fixture';
import { DayTally } from '@payments/sdk';
import type { DayClosedEvent } from '@payments/contracts';
import { derivedUuid } from '@payments/core';
import { DayCloseService } from '../../application/finance/day-close.service';
import { DayTieOutService } from '../../application/finance/day-tie-out.service';
import { ReconciliationService } from '../../application/reconciliation/reconciliation.service';
import type { OrchestratorConfig } from '../../config';
import { IdGenerator } from '../clock';
import { OutboxWriter } from '../outbox/outbox.writer';

interface State {
  status: 'initial' | 'open';
  version: number;
}
type Event = SagaEvent & { type: string };
interface Command {
  type: 'charge' | 'explode';
  commandId: string;
  sagaId: string;
  minor: number;
  endpoint?: string;
}

const ENDPOINT = '4242';

const catalogue: CommandCatalogue = {
  parse(raw) {
    const c = raw as Command;
    const endpointId = c.endpoint ?? ENDPOINT;
    const ids = { commandId: c.commandId, sagaId: c.sagaId, type: c.type, endpointId };
    return { ok: true, command: { ...ids, body: c }, fingerprint: canonicalJson(raw) };
  },
};

/** A charge approved at once (the card payment's `approved` shape); `explode` fails its decision. */
const flow: Flow<State, Event> = {
  name: 'journal-test',
  commandTypes: ['charge', 'explode'],
  moneyEvents: ['approved'],
  initialState: { status: 'initial', version: 0 },
  decide(input, state, ctx) {
    if (input.kind !== 'command')
      return { outcome: 'ignored', reason: 'NO_NEWS', events: [], effects: [] };
    const c = input.command.body as Command;
    if (c.type === 'explode')
      throw new Error('the decision failed after an earlier one was written');
    const event = {
      type: 'approved',
      // The card payment's saga id field, so the SDK's tally finds the saga.
      paymentId: c.sagaId,
      commandId: c.commandId,
      version: state.version + 1,
      occurredAt: ctx.now,
      requestId: randomUUID(),
      amount: { minor: c.minor, currency: 'EUR' },
      merchant: { endpointId: c.endpoint ?? ENDPOINT },
    };
    return { outcome: 'accepted', events: [event], effects: [] };
  },
  evolve: (state, e) => ({ ...state, status: 'open', version: e.version }),
  ...testFlowParts<State>(),
};

describe('journal lines in the transaction of their events', () => {
  const orch = orchestratorFixture({
    name: 'journal',
    start: '2026-01-01T00:00:00.000Z',
    flows: [flow],
    catalogue,
  });
  const command = (raw: Command): RuntimeInput => ({ kind: 'command', raw, meta: {} });
  const charge = (sagaId: string, minor: number): Command => ({
    type: 'charge',
    commandId: randomUUID(),
    sagaId,
    minor,
  });
  const lines = (sagaId: string) =>
    orch.dataSource.query<
      Array<{ account: string; currency: string; amount: string; event_version: number }>
    >(
      `SELECT account, currency, amount::text AS amount, event_version
         FROM journal_lines WHERE saga_id = $1 ORDER BY line_no`,
      [sagaId],
    );

  it("writes an event's balanced lines with it, linked to the saga and the event's version", async () => {
    const id = randomUUID();
    await orch.runtime.process([command(charge(id, 2_500))]);
    expect(await lines(id)).toEqual([
      {
        account: `merchant:${ENDPOINT}:captured-receivable`,
        currency: 'EUR',
        amount: '2500',
        event_version: 1,
      },
      { account: 'world', currency: 'EUR', amount: '-2500', event_version: 1 },
    ]);
  });

  it('a unit of work that rolls back leaves no lines (nor events)', async () => {
    const id = randomUUID();
    const boom: Command = {
      type: 'explode',
      commandId: randomUUID(),
      sagaId: randomUUID(),
      minor: 1,
    };
    await expect(orch.runtime.process([command(charge(id, 700)), command(boom)])).rejects.toThrow(
      'the decision failed',
    );
    expect(await lines(id)).toEqual([]);
    const history = await orch.dataSource.query<unknown[]>(
      'SELECT 1 FROM saga_history WHERE saga_id = $1',
      [id],
    );
    expect(history).toEqual([]);
  });

  it('refuses, at commit, an entry whose lines do not sum to zero', async () => {
    const eventId = randomUUID();
    const insert = (lineNo: number, amount: string) =>
      `INSERT INTO journal_lines (event_id, line_no, saga_id, flow, event_type, event_version,
         endpoint_id, occurred_at, posted_at, account, currency, amount)
       VALUES ('${eventId}', ${lineNo}, 's', 'f', 'approved', 1, '${ENDPOINT}', now(), now(),
               'world', 'EUR', ${amount})`;
    await expect(
      orch.dataSource.transaction(async (tx) => {
        await tx.query(insert(1, '100'));
        await tx.query(insert(2, '-99'));
      }),
    ).rejects.toThrow('does not balance');
    const left = await orch.dataSource.query<unknown[]>(
      'SELECT 1 FROM journal_lines WHERE event_id = $1',
      [eventId],
    );
    expect(left).toEqual([]);
  });

  it('refuses to change a line (append-only)', async () => {
    const id = randomUUID();
    await orch.runtime.process([command(charge(id, 300))]);
    await expect(
      orch.dataSource.query(`UPDATE journal_lines SET amount = 1 WHERE saga_id = $1`, [id]),
    ).rejects.toThrow('append-only');
  });

  describe('merchantSeq (control totals)', () => {
    const seqs = (endpoint: string) =>
      orch.dataSource.query<
        Array<{ seq: string; history: number | null; published: number | null }>
      >(
        `SELECT m.merchant_seq::text AS seq, (h.event->>'merchantSeq')::int AS history,
                (o.payload->>'merchantSeq')::int AS published
           FROM merchant_money_events m
           JOIN saga_history h ON h.event_id = m.event_id
           JOIN outbox o ON o.id = m.event_id
          WHERE m.endpoint_id = $1 ORDER BY m.merchant_seq`,
        [endpoint],
      );

    it('numbers the money events of each merchant 1, 2, 3 … in the event as stored and published', async () => {
      const [a, b] = ['7001', '7002'];
      await orch.runtime.process([
        command({ ...charge(randomUUID(), 100), endpoint: a }),
        command({ ...charge(randomUUID(), 200), endpoint: b }),
        command({ ...charge(randomUUID(), 300), endpoint: a }),
      ]);
      await orch.runtime.process([command({ ...charge(randomUUID(), 400), endpoint: a })]);
      expect(await seqs(a)).toEqual([
        { seq: '1', history: 1, published: 1 },
        { seq: '2', history: 2, published: 2 },
        { seq: '3', history: 3, published: 3 },
      ]);
      expect(await seqs(b)).toEqual([{ seq: '1', history: 1, published: 1 }]);
    });

    it('a unit of work that rolls back gives its numbers back: no gap', async () => {
      const e = '7003';
      const boom: Command = {
        type: 'explode',
        commandId: randomUUID(),
        sagaId: randomUUID(),
        minor: 1,
      };
      await orch.runtime.process([command({ ...charge(randomUUID(), 100), endpoint: e })]);
      await expect(
        orch.runtime.process([
          command({ ...charge(randomUUID(), 200), endpoint: e }),
          command(boom),
        ]),
      ).rejects.toThrow('the decision failed');
      await orch.runtime.process([command({ ...charge(randomUUID(), 300), endpoint: e })]);
      expect((await seqs(e)).map((r) => r.seq)).toEqual(['1', '2']);
    });
  });

  describe("day close (control totals in the merchant's zone)", () => {
    const BERLIN = '7100';
    const config = {
      finance: {
        merchantTimeZones: { [BERLIN]: 'Europe/Berlin' },
        dayCloseGraceSeconds: 900,
      },
    } as unknown as OrchestratorConfig;
    const days = () => new DayCloseService(orch.database, new OutboxWriter(), orch.clock, config);
    const published = () =>
      orch.dataSource.query<Array<{ payload: Record<string, unknown> }>>(
        `SELECT payload FROM outbox WHERE payload->>'type' IN ('approved', 'day-closed')
            AND payload->'merchant'->>'endpointId' = $1
          ORDER BY sequence`,
        [BERLIN],
      );

    it("counts the day's money events in Berlin's day, once; the SDK's tally agrees, and names a lost one", async () => {
      const chargeAt = async (at: string, minor: number) => {
        orch.clock.set(at);
        await orch.runtime.process([command({ ...charge(randomUUID(), minor), endpoint: BERLIN })]);
      };
      await chargeAt('2026-11-27T22:59:59.000Z', 1); // 23:59:59 on the 27th in Berlin
      await chargeAt('2026-11-27T23:00:00.000Z', 100); // 00:00 on the 28th in Berlin
      await chargeAt('2026-11-28T12:00:00.000Z', 250);
      await chargeAt('2026-11-28T23:00:00.000Z', 7); // the 29th in Berlin
      orch.clock.set('2026-11-28T23:20:00.000Z');
      const closed = (await days().closeDueDays()).find(
        (c) => c.event.merchant.endpointId === BERLIN,
      );
      expect(closed?.event).toMatchObject({
        day: '2026-11-28',
        timeZone: 'Europe/Berlin',
        from: '2026-11-27T23:00:00.000Z',
        to: '2026-11-28T23:00:00.000Z',
        totals: [{ eventType: 'approved', currency: 'EUR', count: 2, sumMinor: '350' }],
        count: 2,
        lastMerchantSeq: 3,
      });
      expect(await days().closeDueDays()).toEqual([]);
      const again = await days().close(BERLIN, '2026-11-28', 'someone');
      expect(again.fresh).toBe(false);

      const events = (await published()).map((r) => r.payload);
      const dayClosed = events.filter((e) => e.type === 'day-closed') as DayClosedEvent[];
      expect(dayClosed).toHaveLength(1);
      const received = events.filter((e) => e.type === 'approved');
      const tally = new DayTally();
      for (const e of received) {
        tally.endpointOf(e.paymentId as string, BERLIN);
        tally.add(e as never);
      }
      expect(tally.check(dayClosed[0]).explanation).toEqual([]);
      const lossy = new DayTally();
      for (const e of received.filter((e) => e.merchantSeq !== 2)) {
        lossy.endpointOf(e.paymentId as string, BERLIN);
        lossy.add(e as never);
      }
      expect(lossy.check(dayClosed[0]).explanation).toEqual([
        '2026-11-28 7100 approved EUR: day-closed says 2 (350 minor), received 1 (250 minor)',
        '7100: merchantSeq never received: 2',
      ]);
    });
  });

  describe('close report (the day tied out against the gateway)', () => {
    const EP = '7300';
    const DAY = '2026-03-02';
    const config = {
      finance: { merchantTimeZones: {}, dayCloseGraceSeconds: 900 },
      policy: { unknownAlertSeconds: 3_600 },
    } as unknown as OrchestratorConfig;
    const days = () => new DayCloseService(orch.database, new OutboxWriter(), orch.clock, config);
    const tieOut = () =>
      new DayTieOutService(
        orch.database,
        new ReconciliationService(
          orch.database,
          new OutboxWriter(),
          orch.clock,
          new IdGenerator(),
          config,
        ),
        orch.clock,
      );
    const requestOf = async (sagaId: string) => {
      const [row] = await orch.dataSource.query<Array<{ request_id: string }>>(
        `SELECT request_id FROM journal_lines WHERE saga_id = $1 LIMIT 1`,
        [sagaId],
      );
      return row?.request_id ?? '';
    };

    it("ties each money event to its run's check by request id, names a mismatch and its open case; the case closed starts the next version, once", async () => {
      const [a, b] = [randomUUID(), randomUUID()];
      orch.clock.set(`${DAY}T10:00:00.000Z`);
      await orch.runtime.process([
        command({ ...charge(a, 1_000), endpoint: EP }),
        command({ ...charge(b, 2_000), endpoint: EP }),
      ]);
      const [requestA, requestB] = [await requestOf(a), await requestOf(b)];
      orch.clock.set('2026-03-03T01:00:00.000Z');
      const close = await days().close(EP, DAY, 'op');
      // The day's run as the runner leaves it once the gateway answered: a's request matched,
      // b's the gateway reports declined (we said charged); a case about b is open.
      const runId = derivedUuid(`day-close:${EP}:${DAY}:v1`);
      await orch.dataSource.query(
        `INSERT INTO reconciliation_runs (id, trigger, requested_by, window_from, window_to,
                endpoint_id, status, started_at)
         VALUES ($1, 'on-demand', 'test', $2, $3, $4, 'completed', $3)`,
        [runId, close.event.from, close.event.to, EP],
      );
      const check = (saga: string, requestId: string, verdict: string) =>
        orch.dataSource.query(
          `INSERT INTO reconciliation_checks (run_id, saga_id, subject, request_id, flow,
                  endpoint_id, expectation, state, next_at, verdict)
           VALUES ($1, $2, $3, $4, 'journal-test', $5, $6, 'done', now(), $7)`,
          [
            runId,
            saga,
            `request:${requestId}`,
            randomUUID(),
            EP,
            JSON.stringify({
              status: 'approved',
              operation: 'sale',
              outcome: 'approved',
              basis: 'request',
              requestId,
              serial: '1',
              clientOrderId: saga,
            }),
            verdict,
          ],
        );
      await check(a, requestA, 'match');
      await check(b, requestB, 'reported-charged-but-not');
      const caseId = randomUUID();
      await orch.dataSource.query(
        `INSERT INTO cases (id, flow, saga_id, endpoint_id, request_id, concern, status, record,
                opened_at, updated_at)
         VALUES ($1, 'journal-test', $2, $3, $4, 'reconciliation-mismatch', 'open', '{}', now(), now())`,
        [caseId, b, EP, requestB],
      );

      await tieOut().startFirst(close.event, 'op');
      const [v1] = await tieOut().ofDay(DAY, EP, 'latest');
      expect(v1).toMatchObject({
        version: 1,
        state: 'open-with-exceptions',
        trigger: 'close',
        totals: [
          {
            currency: 'EUR',
            type: 'approved',
            count: 2,
            oursMinor: '3000',
            gatewayMinor: '1000',
            differenceMinor: '2000',
          },
        ],
      });
      expect(v1?.exceptions).toEqual([
        expect.objectContaining({ kind: 'case-open', sagaId: b, caseId }),
        expect.objectContaining({
          kind: 'mismatched',
          sagaId: b,
          requestId: requestB,
          verdict: 'reported-charged-but-not',
          caseId,
        }),
      ]);
      expect(v1?.lines?.map((l) => [l.sagaId, l.status])).toEqual(
        [
          [a, 'matched'],
          [b, 'mismatched'],
        ].sort((x, y) => (x[0] < y[0] ? -1 : 1)),
      );
      // Nothing settled: no next version.
      await tieOut().progress();
      expect(await tieOut().ofDay(DAY, EP, 'all')).toHaveLength(1);

      // The case is closed: the next version starts (its own run), is written, and no further one.
      orch.clock.set('2026-03-03T02:00:00.000Z');
      await orch.dataSource.query(`UPDATE cases SET status = 'closed' WHERE id = $1`, [caseId]);
      await tieOut().progress();
      await tieOut().progress();
      await tieOut().progress();
      const all = await tieOut().ofDay(DAY, EP, 'all');
      expect(all.map((r) => [r.version, r.trigger, r.state === 'reconciling'])).toEqual([
        [1, 'close', false],
        [2, 'settlement', false],
      ]);
      expect(all[1]?.runId).toBe(derivedUuid(`day-close:${EP}:${DAY}:v2`));
      // v2's run checked nothing of this test's flow (not a reconciled flow): both unconfirmed.
      expect(all[1]?.exceptions?.map((e) => e.kind)).toEqual(['unconfirmed', 'unconfirmed']);
    });
  });
});
