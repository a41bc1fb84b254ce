/**
 * The orchestrator under test on PostgreSQL alone (test support only): a fresh migrated database,
 * the saga runtime with the flows a suite needs, and the test clock it reads. A suite calls
 * `orchestratorFixture({...})` inside its describe; the fixture opens in beforeAll and closes
 * (drops the database) in afterAll.
 */
import type { DataSource } from 'typeorm';
import { createDataSource, runMigrations } from '@payments/database';
import { createTestDatabase, type TestDatabase } from '@payments/testing';
import { contractCommands } from '../../src/flows/command-catalogue';
import { orchestratorMigrations } from '../../src/migrations';
import { OutboxWriter } from '../../src/runtime/outbox/outbox.writer';
import { Database } from '../../src/persistence/database';
import { orchestratorEntities } from '../../src/persistence/entities';
import { SagaRepository } from '../../src/persistence/saga.repository';
import { TimerRepository } from '../../src/persistence/timer.repository';
import { IdGenerator } from '../../src/runtime/clock';
import type { CommandCatalogue, Flow } from '../../src/runtime/flow';
import { type AnyFlow, SagaRuntime } from '../../src/runtime/saga-runtime';
import { TestClock } from './base.kit';

/** A fresh test database with the orchestrator's schema, and the DataSource on it. */
interface OrchestratorDatabase {
  readonly db: TestDatabase;
  readonly dataSource: DataSource;
  readonly database: Database;
  /** Closes the DataSource and drops the database (call in afterAll). */
  close(): Promise<void>;
}

async function openOrchestratorDatabase(name: string, poolSize = 4): Promise<OrchestratorDatabase> {
  const db = await createTestDatabase(`orch_${name}`);
  const dataSource = createDataSource({
    url: db.url,
    poolSize,
    migrations: orchestratorMigrations,
    entities: orchestratorEntities,
    applicationName: `orchestrator-${name}-test`,
  });
  try {
    await runMigrations(dataSource, { info: () => undefined });
  } catch (error) {
    if (dataSource.isInitialized) await dataSource.destroy();
    await db.drop();
    throw error;
  }
  return {
    db,
    dataSource,
    database: new Database(dataSource),
    close: async () => {
      try {
        if (dataSource.isInitialized) await dataSource.destroy();
      } finally {
        await db.drop();
      }
    },
  };
}

export interface FixtureOptions {
  /** Names the test database (`payments_test_orch_<name>_…`). */
  readonly name: string;
  /** Where the test clock starts (default T0). */
  readonly start?: string | Date;
  readonly poolSize?: number;
  /** The flows the runtime runs; none: the database alone, no runtime. */
  readonly flows?: readonly AnyFlow[];
  /** How raw commands are parsed (default: the contracts' catalogue). */
  readonly catalogue?: CommandCatalogue;
  readonly timers?: TimerRepository;
}

/** The database, the runtime on it and its clock, for the tests of one describe block. */
export interface OrchestratorFixture {
  readonly clock: TestClock;
  readonly dataSource: DataSource;
  readonly database: Database;
  readonly runtime: SagaRuntime;
  /** Commands as the Kafka consumer hands them over: one batch, decided in order. */
  readonly send: (...commands: object[]) => Promise<void>;
  /** Sets the clock to `instant` and fires every timer due by then. */
  readonly fireAt: (instant: string | Date) => Promise<void>;
}

export function orchestratorFixture(options: FixtureOptions): OrchestratorFixture {
  const clock = new TestClock(options.start);
  let opened: OrchestratorDatabase | undefined;
  let runtime: SagaRuntime | undefined;

  beforeAll(async () => {
    opened = await openOrchestratorDatabase(options.name, options.poolSize);
    if (options.flows === undefined) return;
    runtime = new SagaRuntime(
      opened.database,
      new SagaRepository(),
      new OutboxWriter(),
      options.timers ?? new TimerRepository(),
      clock,
      new IdGenerator(),
      options.flows,
      options.catalogue ?? contractCommands,
      { hintIntervalMs: 60_000 },
    );
  });

  afterAll(() => opened?.close());

  const ready = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what}: the fixture is not open (use it in a test)`);
    return value;
  };

  const fixture: OrchestratorFixture = {
    clock,
    get dataSource() {
      return ready(opened, 'dataSource').dataSource;
    },
    get database() {
      return ready(opened, 'database').database;
    },
    get runtime() {
      return ready(runtime, 'runtime (no flows given)');
    },
    send: (...commands) =>
      fixture.runtime.process(commands.map((raw) => ({ kind: 'command' as const, raw, meta: {} }))),
    fireAt: async (instant) => {
      clock.set(instant);
      while ((await fixture.runtime.fireNextDueTimer()) !== 'idle');
    },
  };
  return fixture;
}

/**
 * What a runtime test's own flow (not a product flow) needs beside its decide and evolve: its
 * status as the projection, the standard rejection event (type, command id, version, time,
 * reason), no deferred resends.
 */
export function testFlowParts<State extends { status: string }>(): Pick<
  Flow<State, never>,
  'project' | 'resendWanted'
> & {
  rejection: (args: Parameters<Flow<State, never>['rejection']>[0]) => {
    type: 'command-rejected';
    commandId: string;
    version: number;
    occurredAt: string;
    reason: string;
  };
} {
  return {
    project: (state) => ({ status: state.status, kind: null, settled: false }),
    rejection: (args) => ({
      type: 'command-rejected',
      commandId: args.commandId,
      version: args.version,
      occurredAt: args.now,
      reason: args.reason,
    }),
    resendWanted: () => false,
  };
}
