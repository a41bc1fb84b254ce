/**
 * The saga runtime against PostgreSQL alone (no broker): a small test flow drives every part of
 * the unit of work — idempotent replay, a refused version, serialised concurrent work, a child saga
 * started in the same transaction, timers set, fired and cancelled, and a batch of inputs for
 * several sagas committed (or rolled back) at once, and the time-to-truth histogram fed from a
 * gateway answer's answeredAt.
 */
import { randomUUID } from 'node:crypto';
import { register } from 'prom-client';
import { canonicalJson } from '../domain';
import type { KeepSooner } from '../domain/decision';
import type { CommandCatalogue, Flow, RuntimeEffect, SagaEvent } from './flow';
import type { GatewayResult } from '@payments/contracts';
import { OUTCOME_METRIC } from './outcome-metrics';
import { UnownedCommandError } from './saga-runtime';
import { orchestratorFixture, testFlowParts } from '../../test/kits/orchestrator.fixture';

// ---- a test flow: a counter that can spawn children and arm a timer --------------------------

interface CounterState {
  status: 'initial' | 'open';
  version: number;
  total: number;
  parent?: string;
}
type CounterEvent = SagaEvent &
  (
    | { type: 'opened'; parent?: string }
    | { type: 'added'; n: number }
    | { type: 'spawned'; childId: string }
    | { type: 'rang' }
    | { type: 'answered'; requestId: string }
    | { type: 'command-rejected'; reason: string }
  );
type CounterCommand =
  | { type: 'open'; commandId: string; sagaId: string; parent?: string }
  | { type: 'add'; commandId: string; sagaId: string; n: number; badVersion?: boolean }
  | { type: 'spawn'; commandId: string; sagaId: string; childId: string }
  /**
   * `keepSooner`: unless a bell it keeps is pending (due no later; with `hinted`, one whose
   * payload says hinted). `hinted`: this bell's payload says hinted (a hint brought it forward).
   */
  | {
      type: 'arm';
      commandId: string;
      sagaId: string;
      at: string;
      keepSooner?: KeepSooner;
      hinted?: true;
    }
  | { type: 'disarm'; commandId: string; sagaId: string }
  /** A resend of `requestId` deferred to `at`; `hasten`: brought forward in the same decision. */
  | {
      type: 'defer';
      commandId: string;
      sagaId: string;
      requestId: string;
      at: string;
      hasten?: true;
    }
  | { type: 'hasten'; commandId: string; sagaId: string; requestId: string };

const COUNTER_COMMANDS = ['open', 'add', 'spawn', 'arm', 'disarm', 'defer', 'hasten'];
/** A type the catalogue parses and no flow owns (a family registered without its flow). */
const ORPHAN = 'orphan';

const catalogue: CommandCatalogue = {
  parse(raw) {
    const c = raw as CounterCommand;
    const fingerprint = canonicalJson(raw);
    if (!COUNTER_COMMANDS.includes(c.type) && (c.type as string) !== ORPHAN) {
      return {
        ok: false,
        reason: 'UNKNOWN_TYPE',
        message: 'unknown',
        ids: { commandId: c.commandId, sagaId: c.sagaId, type: c.type, endpointId: 'e' },
        fingerprint,
      };
    }
    return {
      ok: true,
      command: { type: c.type, commandId: c.commandId, sagaId: c.sagaId, endpointId: 'e', body: c },
      fingerprint,
    };
  },
};

const counterFlow: Flow<CounterState, CounterEvent> = {
  name: 'counter',
  commandTypes: COUNTER_COMMANDS,
  initialState: { status: 'initial', version: 0, total: 0 },
  decide(input, state, ctx) {
    const at = (offset: number, draft: Record<string, unknown>) =>
      ({ ...draft, version: state.version + 1 + offset, occurredAt: ctx.now }) as CounterEvent;
    if (input.kind === 'timer') {
      return {
        outcome: 'accepted',
        events: [at(0, { type: 'rang', commandId: randomUUID() })],
        effects: [],
      };
    }
    // A gateway result about an open counter is news (an event); about none, nothing is written.
    if (input.kind === 'gateway-result' && state.status === 'open') {
      const { requestId } = input.result;
      return {
        outcome: 'accepted',
        events: [at(0, { type: 'answered', commandId: randomUUID(), requestId })],
        effects: [],
      };
    }
    if (input.kind !== 'command')
      return { outcome: 'ignored', reason: 'NO_NEWS', events: [], effects: [] };
    const c = input.command.body as CounterCommand;
    const base = { commandId: c.commandId };
    const reject = (reason: string) => ({
      outcome: 'rejected' as const,
      rejection: { code: 'INVALID_STATE' as const, message: reason },
      events: [at(0, { ...base, type: 'command-rejected', reason })],
      effects: [] as [],
    });
    switch (c.type) {
      case 'open':
        if (state.status !== 'initial') return reject('exists');
        return {
          outcome: 'accepted',
          events: [at(0, { ...base, type: 'opened', ...(c.parent ? { parent: c.parent } : {}) })],
          effects: [],
        };
      case 'add': {
        if (state.status !== 'open') return reject('not open');
        const event = at(c.badVersion ? 5 : 0, { ...base, type: 'added', n: c.n });
        return { outcome: 'accepted', events: [event], effects: [] };
      }
      case 'spawn': {
        const child = {
          type: 'open',
          commandId: `${c.commandId.slice(0, 24)}${'0'.repeat(12)}`,
          sagaId: c.childId,
          parent: c.sagaId,
        };
        const effects: RuntimeEffect[] = [{ type: 'start-saga', command: child }];
        return {
          outcome: 'accepted',
          events: [at(0, { ...base, type: 'spawned', childId: c.childId })],
          effects,
        };
      }
      case 'arm':
        return {
          outcome: 'accepted',
          events: [],
          effects: [
            {
              type: 'set-timer',
              kind: 'bell',
              at: c.at,
              payload: { armedBy: c.commandId, ...(c.hinted ? { hinted: true } : {}) },
              ...(c.keepSooner === undefined ? {} : { keepSooner: c.keepSooner }),
            },
          ],
        };
      case 'disarm':
        return {
          outcome: 'accepted',
          events: [],
          effects: [{ type: 'cancel-timer', kind: 'bell' }],
        };
      case 'defer':
        return {
          outcome: 'accepted',
          events: [],
          effects: [
            { type: 'resend-gateway-request', requestId: c.requestId, attempt: 2, notBefore: c.at },
            ...(c.hasten ? [{ type: 'hasten-resend' as const, requestId: c.requestId }] : []),
          ],
        };
      case 'hasten':
        return {
          outcome: 'accepted',
          events: [],
          effects: [{ type: 'hasten-resend', requestId: c.requestId }],
        };
      default: {
        const never: never = c;
        throw new Error(`unhandled ${JSON.stringify(never)}`);
      }
    }
  },
  evolve(state, event) {
    switch (event.type) {
      case 'opened':
        return {
          ...state,
          status: 'open',
          version: event.version,
          ...(event.parent ? { parent: event.parent } : {}),
        };
      case 'added':
        return { ...state, version: event.version, total: state.total + event.n };
      case 'spawned':
      case 'rang':
      case 'answered':
      case 'command-rejected':
        return { ...state, version: event.version };
      default: {
        const never: never = event;
        throw new Error(`unhandled ${JSON.stringify(never)}`);
      }
    }
  },
  ...testFlowParts<CounterState>(),
};

describe('saga runtime (real PostgreSQL, no broker)', () => {
  const orch = orchestratorFixture({
    name: 'runtime',
    poolSize: 6,
    start: '2026-01-01T00:00:00.000Z',
    flows: [counterFlow],
    catalogue,
  });
  const { clock, send } = orch;

  const history = (sagaId: string) =>
    orch.dataSource.query<Array<{ version: number; event_type: string }>>(
      `SELECT version, event_type FROM saga_history WHERE saga_id = $1 ORDER BY version`,
      [sagaId],
    );
  const saga = async (sagaId: string) =>
    (
      await orch.dataSource.query<Array<{ flow: string; version: number; state: CounterState }>>(
        `SELECT flow, version, state FROM sagas WHERE id = $1`,
        [sagaId],
      )
    )[0];
  const outboxCount = async (sagaId: string) =>
    Number(
      (
        await orch.dataSource.query<Array<{ n: string }>>(
          `SELECT count(*) AS n FROM outbox WHERE aggregate_id = $1`,
          [sagaId],
        )
      )[0]?.n,
    );
  const open = (sagaId: string) => ({ type: 'open', commandId: randomUUID(), sagaId });
  const add = (sagaId: string, n: number, extra: object = {}) => ({
    type: 'add',
    commandId: randomUUID(),
    sagaId,
    n,
    ...extra,
  });

  it('refuses a valid command no flow owns, before writing anything: never decided by another flow', async () => {
    const id = randomUUID();
    const orphan = { type: ORPHAN, commandId: randomUUID(), sagaId: id };
    await expect(send(orphan)).rejects.toBeInstanceOf(UnownedCommandError);
    await expect(send(open(randomUUID()), orphan)).rejects.toThrow(
      'command type orphan has no flow',
    );
    expect(await saga(id)).toBeUndefined();
    expect(await outboxCount(id)).toBe(0);
    const recorded = await orch.dataSource.query<unknown[]>(
      `SELECT 1 FROM commands WHERE command_id = $1`,
      [orphan.commandId],
    );
    expect(recorded).toEqual([]);
  });

  it('replays a command idempotently: same id and body re-emits, changes nothing', async () => {
    const id = randomUUID();
    const command = open(id);
    await send(command);
    await send(command);
    expect(await history(id)).toEqual([{ version: 1, event_type: 'opened' }]);
    // The event was published twice (re-emitted with its ce_id), the state moved once.
    expect(await outboxCount(id)).toBe(2);
    const ceIds = await orch.dataSource.query<Array<{ ce: string }>>(
      `SELECT headers->>'ce_id' AS ce FROM outbox WHERE aggregate_id = $1`,
      [id],
    );
    expect(new Set(ceIds.map((r) => r.ce)).size).toBe(1);
    // Same id, other body: rejected as a conflict, as an event with the next version.
    await send({ ...command, parent: 'x' });
    expect(await history(id)).toEqual([
      { version: 1, event_type: 'opened' },
      { version: 2, event_type: 'command-rejected' },
    ]);
  });

  it('creates nothing for a command about a saga that does not exist: a version-0 rejection, re-emitted with its ce_id', async () => {
    const id = randomUUID();
    const stray = add(id, 5);
    await send(stray);
    expect(await saga(id)).toBeUndefined();
    expect(await history(id)).toEqual([]);
    const published = () =>
      orch.dataSource.query<Array<{ ce: string; version: number; type: string }>>(
        `SELECT headers->>'ce_id' AS ce, (payload->>'version')::int AS version,
                payload->>'type' AS type
           FROM outbox WHERE aggregate_id = $1 ORDER BY sequence`,
        [id],
      );
    const [first] = await published();
    expect(first).toMatchObject({ version: 0, type: 'command-rejected' });
    await send(stray); // redelivered: the same rejection again, same ce_id, still nothing created
    expect((await published()).map((r) => r.ce)).toEqual([first?.ce, first?.ce]);
    expect(await saga(id)).toBeUndefined();
    // The saga then starts normally, its history from version 1.
    await send(open(id));
    expect(await history(id)).toEqual([{ version: 1, event_type: 'opened' }]);
  });

  it('refuses a decision whose events do not continue the saga version, writing nothing', async () => {
    const id = randomUUID();
    await send(open(id));
    await expect(send(add(id, 3, { badVersion: true }))).rejects.toThrow(/version/i);
    expect(await history(id)).toEqual([{ version: 1, event_type: 'opened' }]);
    expect(await saga(id)).toMatchObject({ version: 1, state: { total: 0 } });
  });

  it('serialises concurrent units of work on one saga: no lost update, no version gap', async () => {
    const id = randomUUID();
    await send(open(id));
    await Promise.all(Array.from({ length: 8 }, (_, i) => send(add(id, i + 1))));
    const events = await history(id);
    expect(events.map((e) => e.version)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(await saga(id)).toMatchObject({ version: 9, state: { total: 36 } });
  });

  it('starts a child saga in the same transaction, and not at all when it rolls back', async () => {
    const parent = randomUUID();
    const child = randomUUID();
    await send(open(parent), {
      type: 'spawn',
      commandId: randomUUID(),
      sagaId: parent,
      childId: child,
    });
    expect(await saga(child)).toMatchObject({ flow: 'counter', version: 1, state: { parent } });
    expect(await history(child)).toEqual([{ version: 1, event_type: 'opened' }]);

    const parent2 = randomUUID();
    const child2 = randomUUID();
    await expect(
      send(
        open(parent2),
        { type: 'spawn', commandId: randomUUID(), sagaId: parent2, childId: child2 },
        add(parent2, 1, { badVersion: true }),
      ),
    ).rejects.toThrow();
    expect(await saga(parent2)).toBeUndefined();
    expect(await saga(child2)).toBeUndefined();
  });

  it('sets a timer keyed by (flow, saga, kind), fires it once when due, and cancels it', async () => {
    const id = randomUUID();
    const due = new Date(clock.at.getTime() + 60_000).toISOString();
    await send(open(id), { type: 'arm', commandId: randomUUID(), sagaId: id, at: due });
    const timers = () =>
      orch.dataSource.query<Array<{ flow: string; kind: string }>>(
        `SELECT flow, kind FROM timers WHERE saga_id = $1`,
        [id],
      );
    expect(await timers()).toEqual([{ flow: 'counter', kind: 'bell' }]);
    expect(await orch.runtime.fireNextDueTimer()).toBe('idle');
    clock.at = new Date(Date.parse(due) + 1);
    expect(await orch.runtime.fireNextDueTimer()).toBe('fired');
    expect(await orch.runtime.fireNextDueTimer()).toBe('idle');
    expect((await history(id)).map((e) => e.event_type)).toEqual(['opened', 'rang']);
    expect(await timers()).toEqual([]);

    await send({ type: 'arm', commandId: randomUUID(), sagaId: id, at: due });
    expect(await timers()).toHaveLength(1);
    await send({ type: 'disarm', commandId: randomUUID(), sagaId: id });
    expect(await timers()).toEqual([]);
  });

  it('a keep-sooner timer leaves one due no later as it is (time and payload) and replaces one due later', async () => {
    const id = randomUUID();
    const bell = async () =>
      (
        await orch.dataSource.query<Array<{ due_at: Date; payload: { armedBy: string } }>>(
          `SELECT due_at, payload FROM timers WHERE saga_id = $1 AND kind = 'bell'`,
          [id],
        )
      )[0];
    const arm = (seconds: number, keepSooner?: KeepSooner, hinted = false) => ({
      type: 'arm',
      commandId: randomUUID(),
      sagaId: id,
      at: new Date(clock.at.getTime() + seconds * 1000).toISOString(),
      ...(keepSooner === undefined ? {} : { keepSooner }),
      ...(hinted ? { hinted: true } : {}),
    });
    // None pending: set.
    const first = arm(10, 'any');
    await send(open(id), first);
    expect(await bell()).toMatchObject({ payload: { armedBy: first.commandId } });
    // A hint's bell due now, then a keep-sooner one due later: the sooner one stays.
    const soon = arm(0);
    await send(soon);
    await send(arm(4, 'any'));
    expect(await bell()).toEqual({ due_at: clock.at, payload: { armedBy: soon.commandId } });
    // Due sooner than the pending one: it replaces it.
    await send(arm(60));
    const sooner = arm(4, 'any');
    await send(sooner);
    expect(await bell()).toEqual({
      due_at: new Date(sooner.at),
      payload: { armedBy: sooner.commandId },
    });
    // Keeping only a hinted one: a sooner bell that is not hinted is replaced (a held query's
    // re-ask replaces the cadence's poll), a sooner hinted one stays (a hint's poll).
    const reask = arm(20, 'hinted');
    await send(reask);
    expect(await bell()).toMatchObject({ payload: { armedBy: reask.commandId } });
    const hint = arm(1, undefined, true);
    await send(hint);
    await send(arm(20, 'hinted'));
    expect(await bell()).toEqual({
      due_at: new Date(hint.at),
      payload: { armedBy: hint.commandId, hinted: true },
    });
  });

  it("brings a deferred resend forward to now, only that very request's, and only when it was due later", async () => {
    const id = randomUUID();
    const [mine, other] = [randomUUID(), randomUUID()];
    const later = new Date(clock.at.getTime() + 10 * 60_000).toISOString();
    const resend = async () =>
      (
        await orch.dataSource.query<Array<{ due_at: Date; payload: { requestId: string } }>>(
          `SELECT due_at, payload FROM timers WHERE saga_id = $1 AND kind = 'gateway-resend'`,
          [id],
        )
      )[0];
    const defer = (requestId: string, extra: object = {}) => ({
      type: 'defer',
      commandId: randomUUID(),
      sagaId: id,
      requestId,
      at: later,
      ...extra,
    });
    const hasten = (requestId: string) => ({
      type: 'hasten',
      commandId: randomUUID(),
      sagaId: id,
      requestId,
    });
    await send(open(id), hasten(mine));
    expect(await resend()).toBeUndefined();
    await send(defer(mine));
    expect((await resend())?.due_at.toISOString()).toBe(later);
    await send(hasten(other));
    expect((await resend())?.due_at.toISOString()).toBe(later);
    expect(await orch.runtime.fireNextDueTimer()).toBe('idle');
    await send(hasten(mine));
    expect(await resend()).toMatchObject({ due_at: clock.at, payload: { requestId: mine } });
    expect(await orch.runtime.fireNextDueTimer()).toBe('fired');
    expect(await resend()).toBeUndefined();
    // Set and brought forward in one decision: due now.
    await send(defer(mine, { hasten: true }));
    expect((await resend())?.due_at.toISOString()).toBe(clock.at.toISOString());
    expect(await orch.runtime.fireNextDueTimer()).toBe('fired');
  });

  it('commits a batch of inputs for several sagas at once, in order per saga', async () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    await send(open(a), open(b), add(a, 1), open(c), add(b, 10), add(a, 2), add(c, 100));
    expect(await saga(a)).toMatchObject({ version: 3, state: { total: 3 } });
    expect(await saga(b)).toMatchObject({ version: 2, state: { total: 10 } });
    expect(await saga(c)).toMatchObject({ version: 2, state: { total: 100 } });
    const order = await orch.dataSource.query<Array<{ aggregate_id: string; v: number }>>(
      `SELECT aggregate_id, (payload->>'version')::int AS v FROM outbox
        WHERE aggregate_id = ANY($1::text[]) ORDER BY sequence`,
      [[a, b, c]],
    );
    for (const id of [a, b, c]) {
      const versions = order.filter((r) => r.aggregate_id === id).map((r) => r.v);
      expect(versions).toEqual([...versions].sort((x, y) => x - y));
    }

    // One bad input rolls the whole batch back: nothing of it is written.
    const [d, e] = [randomUUID(), randomUUID()];
    await expect(send(open(d), open(e), add(e, 1, { badVersion: true }))).rejects.toThrow();
    expect(await saga(d)).toBeUndefined();
    expect(await saga(e)).toBeUndefined();
  });

  it('counts the events of committed units of work only: nothing rolled back, nothing re-emitted', async () => {
    // The counter flow's events counted so far, by type.
    const counted = async (): Promise<Map<string, number>> => {
      const metric = register.getSingleMetric(OUTCOME_METRIC.events);
      const values = metric ? (await metric.get()).values : [];
      return new Map(
        values
          .filter((v) => v.labels.flow === 'counter')
          .map((v) => [String(v.labels.type), v.value]),
      );
    };
    const before = await counted();
    const delta = async (): Promise<Record<string, number>> => {
      const moved: Record<string, number> = {};
      for (const [type, n] of await counted()) {
        const d = n - (before.get(type) ?? 0);
        if (d !== 0) moved[type] = d;
      }
      return moved;
    };
    const id = randomUUID();
    const opening = open(id);
    await send(opening, add(id, 1), add(id, 2));
    expect(await delta()).toEqual({ opened: 1, added: 2 });
    await send(opening); // a duplicate: its event is published again, not counted again
    const [d, e] = [randomUUID(), randomUUID()];
    await expect(send(open(d), open(e), add(e, 1, { badVersion: true }))).rejects.toThrow();
    expect(await delta()).toEqual({ opened: 1, added: 2 });
    // A timer firing is a unit of work of its own.
    const due = new Date(clock.at.getTime() + 1000).toISOString();
    await send({ type: 'arm', commandId: randomUUID(), sagaId: id, at: due });
    clock.at = new Date(Date.parse(due) + 1);
    expect(await orch.runtime.fireNextDueTimer()).toBe('fired');
    expect(await delta()).toEqual({ opened: 1, added: 2, rang: 1 });
  });

  it('times the events a gateway answer wrote from its answeredAt to the commit, once per answer', async () => {
    // The counter flow's observations so far: count and sum per operation and source.
    const timed = async (): Promise<Record<string, number>> => {
      const metric = register.getSingleMetric(OUTCOME_METRIC.timeToTruth);
      const values = metric ? (await metric.get()).values : [];
      const out: Record<string, number> = {};
      for (const v of values) {
        const series = (v as { metricName?: string }).metricName ?? '';
        if (v.labels.flow !== 'counter' || series.endsWith('_bucket')) continue;
        const key = `${series.slice(OUTCOME_METRIC.timeToTruth.length + 1)} ${String(v.labels.operation)} ${String(v.labels.source)}`;
        out[key] = Math.round(v.value * 1000) / 1000;
      }
      return out;
    };
    const result = (sagaId: string, answeredAt?: string): GatewayResult => ({
      requestId: randomUUID(),
      paymentId: sagaId,
      operation: 'sale',
      attempt: 1,
      result: { kind: 'accepted' },
      completedAt: clock.at.toISOString(),
      ...(answeredAt === undefined ? {} : { answeredAt }),
    });
    const before = await timed();
    const id = randomUUID();
    await send(open(id), add(id, 1)); // commands: no gateway answer, nothing timed
    expect(await timed()).toEqual(before);

    const answered = result(id, new Date(clock.at.getTime() - 2_500).toISOString());
    await orch.runtime.handleGatewayResult(answered, {});
    await orch.runtime.handleGatewayResult(answered, {}); // redelivered: the inbox drops it
    const after = await timed();
    expect(after['count sale reply']).toBe((before['count sale reply'] ?? 0) + 1);
    expect(after['sum sale reply']).toBe((before['sum sale reply'] ?? 0) + 2.5);
    expect((await history(id)).map((h) => h.event_type)).toEqual(['opened', 'added', 'answered']);

    // A result the gateway did not answer (no answeredAt) writes its event, timed by nothing.
    await orch.runtime.handleGatewayResult(result(id), {});
    expect((await history(id)).map((h) => h.event_type)).toEqual([
      'opened',
      'added',
      'answered',
      'answered',
    ]);
    expect(await timed()).toEqual(after);
    // An answer about a saga that writes nothing for it: nothing timed.
    await orch.runtime.handleGatewayResult(result(randomUUID(), clock.at.toISOString()), {});
    expect(await timed()).toEqual(after);
  });

  it('runs batches that share sagas, listed in opposite orders, side by side without a deadlock', async () => {
    const ids = Array.from({ length: 6 }, () => randomUUID());
    await send(...ids.map(open));
    // Each round: two batches touch every saga, one front to back, the other back to front. Without
    // the sorted up-front locks PostgreSQL aborts one of them (40P01 deadlock detected).
    for (let round = 0; round < 5; round++) {
      await Promise.all([
        send(...ids.map((id) => add(id, 1))),
        send(...[...ids].reverse().map((id) => add(id, 1))),
      ]);
    }
    for (const id of ids) {
      expect(await saga(id)).toMatchObject({ version: 11, state: { total: 10 } });
      expect((await history(id)).map((h) => h.version)).toEqual(
        Array.from({ length: 11 }, (_, i) => i + 1),
      );
    }
  });
});
