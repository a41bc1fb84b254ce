import type { DataSource } from 'typeorm';
import { createDataSource, runMigrations } from '@payments/database';
import { createTestDatabase, type TestDatabase } from '@payments/testing';
import { orchestratorMigrations } from '../../src/migrations';
import { OutboxWriter } from '../../src/runtime/outbox/outbox.writer';
import { Database } from '../../src/persistence/database';
import { orchestratorEntities } from '../../src/persistence/entities';
import { SagaRepository } from '../../src/persistence/saga.repository';
import { TimerRepository } from '../../src/persistence/timer.repository';
import { Clock, IdGenerator } from '../../src/runtime/clock';
import type { CommandCatalogue } from '../../src/runtime/flow';
import { type AnyFlow, SagaRuntime } from '../../src/runtime/saga-runtime';

/** The orchestrator's clock standing still at `at` until a test moves it. */
export class FixedClock extends Clock {
  constructor(public at: Date) {
    super();
  }

  override now(): Date {
    return new Date(this.at);
  }

  /** Moves the clock forward; returns the new now. */
  advance(ms: number): Date {
    this.at = new Date(this.at.getTime() + ms);
    return this.now();
  }
}

/** A fresh test database with the orchestrator's schema, and the DataSource on it. */
export interface OrchestratorDatabase {
  readonly db: TestDatabase;
  readonly dataSource: DataSource;
  readonly database: Database;
  /** Closes the DataSource and drops the database (call in afterAll). */
  close(): Promise<void>;
}

export async function openOrchestratorDatabase(
  name: string,
  poolSize = 4,
): Promise<OrchestratorDatabase> {
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

/** The saga runtime on a fresh orchestrator database, with the flows a test needs. */
export interface RuntimeDatabase extends OrchestratorDatabase {
  readonly runtime: SagaRuntime;
}

export async function startRuntimeDatabase(options: {
  readonly name: string;
  readonly flows: readonly AnyFlow[];
  readonly catalogue: CommandCatalogue;
  readonly clock: Clock;
  readonly timers?: TimerRepository;
  readonly poolSize?: number;
}): Promise<RuntimeDatabase> {
  const opened = await openOrchestratorDatabase(options.name, options.poolSize);
  const runtime = new SagaRuntime(
    opened.database,
    new SagaRepository(),
    new OutboxWriter(),
    options.timers ?? new TimerRepository(),
    options.clock,
    new IdGenerator(),
    options.flows,
    options.catalogue,
    { hintIntervalMs: 60_000 },
  );
  return { ...opened, runtime };
}
