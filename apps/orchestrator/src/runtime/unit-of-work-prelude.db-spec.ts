/**
 * A unit of work's opening, the prelude: one statement (sagas locked, inbox rows and command
 * records written together) that decides every edge as a statement each would — a command given
 * twice in one batch, with the same body or another, a command about a saga that does not exist,
 * ids not in canonical form, a gateway result given twice. (The runtime's second road, a
 * statement each, was measured against it and removed: docs/capacity.md.)
 */
import { randomUUID } from 'node:crypto';
import type { GatewayResult } from '@payments/contracts';
import { canonicalJson } from '../domain';
import type { CommandCatalogue, Flow, SagaEvent } from './flow';
import type { RuntimeInput } from './saga-runtime';
import { orchestratorFixture, testFlowParts } from '../../test/kits/orchestrator.fixture';

interface State {
  status: 'initial' | 'open';
  version: number;
  results: number;
}
type Event = SagaEvent &
  ({ type: 'opened' } | { type: 'answered' } | { type: 'command-rejected'; reason: string });
interface Command {
  type: 'open' | 'other';
  commandId: string;
  sagaId: string;
  note?: string;
}

const catalogue: CommandCatalogue = {
  parse(raw) {
    const c = raw as Command;
    const fingerprint = canonicalJson(raw);
    if (c.type !== 'open') {
      const ids = { commandId: c.commandId, sagaId: c.sagaId, type: c.type, endpointId: 'e' };
      return { ok: false, reason: 'UNKNOWN_TYPE', message: 'unknown', ids, fingerprint };
    }
    const command = { type: c.type, commandId: c.commandId, sagaId: c.sagaId, endpointId: 'e' };
    return { ok: true, command: { ...command, body: c }, fingerprint };
  },
};

const flow: Flow<State, Event> = {
  name: 'prelude-test',
  commandTypes: ['open', 'other'],
  initialState: { status: 'initial', version: 0, results: 0 },
  decide(input, state, ctx) {
    const event = (draft: Record<string, unknown>) =>
      ({ ...draft, version: state.version + 1, occurredAt: ctx.now }) as Event;
    if (input.kind === 'gateway-result') {
      return {
        outcome: 'accepted',
        events: [event({ type: 'answered', commandId: randomUUID() })],
        effects: [],
      };
    }
    if (input.kind !== 'command') {
      return { outcome: 'ignored', reason: 'NO_NEWS', events: [], effects: [] };
    }
    const { commandId } = input.command;
    if (state.status !== 'initial') {
      return {
        outcome: 'rejected',
        rejection: { code: 'INVALID_STATE', message: 'exists' },
        events: [event({ type: 'command-rejected', commandId, reason: 'exists' })],
        effects: [],
      };
    }
    return { outcome: 'accepted', events: [event({ type: 'opened', commandId })], effects: [] };
  },
  evolve(state, e) {
    if (e.type === 'opened') return { ...state, status: 'open', version: e.version };
    if (e.type === 'answered') return { ...state, version: e.version, results: state.results + 1 };
    return { ...state, version: e.version };
  },
  ...testFlowParts<State>(),
};

describe('unit of work opened by one statement', () => {
  const orch = orchestratorFixture({
    name: 'prelude',
    start: '2026-01-01T00:00:00.000Z',
    flows: [flow],
    catalogue,
  });

  const command = (raw: Command): RuntimeInput => ({ kind: 'command', raw, meta: {} });
  const open = (sagaId: string, commandId: string = randomUUID()): Command => ({
    type: 'open',
    commandId,
    sagaId,
  });
  const history = (sagaId: string) =>
    orch.dataSource.query<Array<{ version: number; event_type: string }>>(
      'SELECT version, event_type FROM saga_history WHERE saga_id = $1 ORDER BY version',
      [sagaId],
    );
  const published = (sagaId: string) =>
    orch.dataSource.query<Array<{ ce: string; type: string; version: number }>>(
      `SELECT headers->>'ce_id' AS ce, payload->>'type' AS type,
              (payload->>'version')::int AS version
         FROM outbox WHERE aggregate_id = $1 ORDER BY sequence`,
      [sagaId],
    );

  it('decides a command given twice in one batch once, and re-emits its event', async () => {
    const id = randomUUID();
    const twice = open(id);
    await orch.runtime.process([command(twice), command({ ...twice })]);
    expect(await history(id)).toEqual([{ version: 1, event_type: 'opened' }]);
    const events = await published(id);
    expect(events.map((e) => e.type)).toEqual(['opened', 'opened']);
    expect(new Set(events.map((e) => e.ce)).size).toBe(1);
  });

  it('rejects the second of two bodies under one command id in one batch as a conflict', async () => {
    const id = randomUUID();
    const first = open(id);
    await orch.runtime.process([command(first), command({ ...first, note: 'changed' })]);
    expect(await history(id)).toEqual([
      { version: 1, event_type: 'opened' },
      { version: 2, event_type: 'command-rejected' },
    ]);
  });

  it('re-emits the version-0 rejection of a command about no saga, given twice in one batch', async () => {
    const id = randomUUID();
    const stray: Command = { type: 'other', commandId: randomUUID(), sagaId: id };
    await orch.runtime.process([command(stray)]);
    await orch.runtime.process([command(stray), command({ ...stray })]);
    const events = await published(id);
    expect(events.map((e) => [e.type, e.version])).toEqual([
      ['command-rejected', 0],
      ['command-rejected', 0],
      ['command-rejected', 0],
    ]);
    expect(new Set(events.map((e) => e.ce)).size).toBe(1);
    expect(await history(id)).toEqual([]);
  });

  it('decides by the stored record when ids are not in canonical form', async () => {
    const id = randomUUID();
    const upper = open(id, randomUUID().toUpperCase());
    await orch.runtime.process([command(upper)]);
    await orch.runtime.process([command({ ...upper })]);
    expect(await history(id)).toEqual([{ version: 1, event_type: 'opened' }]);
    expect((await published(id)).map((e) => e.type)).toEqual(['opened', 'opened']);
  });

  it('takes a gateway result once, given twice in one batch and again later', async () => {
    const id = randomUUID();
    await orch.runtime.process([command(open(id))]);
    const result = {
      kind: 'gateway-result',
      result: { requestId: randomUUID(), attempt: 1, paymentId: id } as unknown as GatewayResult,
      meta: {},
    } as const;
    await orch.runtime.process([result, result]);
    await orch.runtime.process([result]);
    expect(await history(id)).toEqual([
      { version: 1, event_type: 'opened' },
      { version: 2, event_type: 'answered' },
    ]);
  });
});
