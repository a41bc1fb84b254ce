import type { SentCommand } from './checks';
import { brokerNodeFor, failoverFigures, quorumLeader, withDatabase } from './infrastructure';
import { defaultActions, parseActions } from './main';
import type { TimedEvent } from './time-to-truth';

describe('the KRaft controller and the broker actions', () => {
  const state = (leaderId: number, leaderEpoch: number) =>
    JSON.stringify({ clusterId: '', leaderId, leaderEpoch, votedId: -1, data_version: 0 });

  it("takes the leader of the highest epoch any node has seen (a killed leader's file is stale)", () => {
    expect(quorumLeader([state(1, 3), state(2, 4), state(2, 4)])).toBe(2);
    expect(quorumLeader([undefined, state(3, 1), 'not json'])).toBe(3);
    // During an election no node names a leader (-1).
    expect(quorumLeader([state(-1, 5), undefined, undefined])).toBeUndefined();
  });

  it('kills the controller only by its own action; broker actions take the other nodes in turn', () => {
    expect(brokerNodeFor('controller', true, 2, 0)).toBe(2);
    expect([0, 1, 2, 3].map((turn) => brokerNodeFor('broker', true, 2, turn))).toEqual([
      1, 3, 1, 3,
    ]);
    // One broker: always node 1.
    expect(brokerNodeFor('controller', false, undefined, 0)).toBe(1);
    expect(brokerNodeFor('broker', false, undefined, 5)).toBe(1);
  });

  it('puts the controller kill and the lost PostgreSQL primary in the default actions when the run has them', () => {
    const both = parseActions(defaultActions({ cluster: true, failover: true }));
    const targets = both.map((a) => `${a.target}:${a.signal}`);
    expect(targets.filter((t) => t === 'controller:SIGKILL')).toHaveLength(1);
    expect(targets.filter((t) => t === 'broker:SIGKILL')).toHaveLength(1);
    expect(targets.filter((t) => t === 'postgres:SIGKILL')).toHaveLength(1);
    // After the adapter's database outage (half-way through the sending).
    expect(targets.indexOf('postgres:SIGKILL')).toBeGreaterThan(both.length / 2);
    const neither = parseActions(defaultActions({ cluster: false, failover: false })).map(
      (a) => a.target,
    );
    expect(neither).not.toContain('controller');
    expect(neither).not.toContain('postgres');
    expect(() => parseActions('postgres:STOP')).toThrow(/bad action/);
  });
});

describe('failover figures', () => {
  const T0 = 1_800_000_000_000;
  const command = (id: string, type: SentCommand['type'], sentAt: number): SentCommand => ({
    commandId: `c-${id}`,
    paymentId: id,
    type,
    sentAt,
  });
  const event = (saga: string, type: string, at: number, commandId?: string): TimedEvent => ({
    event: {
      type,
      paymentId: saga,
      version: 1,
      ...(commandId === undefined ? {} : { commandId }),
    } as unknown as TimedEvent['event'],
    ceId: `${saga}-${type}-${at}`,
    at,
  });

  it('times the writable primary, the first sale after the kill, and the backlog sent without a primary', () => {
    const commands = [
      command('before', 'sale', T0 - 1_000),
      command('during-1', 'sale', T0 + 2_000),
      command('during-2', 'capture', T0 + 5_000),
      command('after', 'sale', T0 + 9_000),
    ];
    const events = new Map([
      ['before', [event('before', 'approved', T0 + 500)]],
      [
        'during-1',
        [
          event('during-1', 'operation-requested', T0 + 11_000, 'c-during-1'),
          event('during-1', 'approved', T0 + 14_000),
        ],
      ],
      ['during-2', [event('during-2', 'operation-requested', T0 + 12_000, 'c-during-2')]],
      ['after', [event('after', 'declined', T0 + 13_000)]],
    ]);
    expect(failoverFigures({ killedAt: T0, writableAt: T0 + 8_000, commands, events })).toEqual({
      noWritableMs: 8_000,
      // The sale sent before the kill does not count, though final first.
      firstSaleFinalMs: 13_000,
      backlogDrainedMs: 12_000,
      backlogCommands: 2,
    });
  });

  it('leaves the drain untimed when a command of the backlog never got an event (lost)', () => {
    const figures = failoverFigures({
      killedAt: T0,
      writableAt: T0 + 8_000,
      commands: [command('lost', 'sale', T0 + 1_000)],
      events: new Map(),
    });
    expect(figures).toEqual({ noWritableMs: 8_000, backlogCommands: 1 });
  });
});

describe('withDatabase', () => {
  it('names another database in a multi-host URL, keeping its hosts and parameters', () => {
    expect(
      withDatabase(
        'postgres://postgres@127.0.0.1:25482,127.0.0.1:25483/postgres?target_session_attrs=read-write',
        'payments_chaos',
      ),
    ).toBe(
      'postgres://postgres@127.0.0.1:25482,127.0.0.1:25483/payments_chaos?target_session_attrs=read-write',
    );
  });
});
