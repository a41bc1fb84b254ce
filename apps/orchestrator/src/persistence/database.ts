import { Injectable } from '@nestjs/common';
import { DataSource, type EntityManager } from 'typeorm';

/**
 * The orchestrator's unit of work on PostgreSQL through TypeORM: one transaction (READ COMMITTED;
 * rows that must not change underneath are locked FOR UPDATE) whose EntityManager every
 * repository method takes, so a whole decision commits or rolls back together.
 */
@Injectable()
export class Database {
  constructor(private readonly dataSource: DataSource) {}

  /** Runs `work` in one transaction on one connection: committed if it resolves, else rolled back. */
  transaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** Reads outside a transaction (the HTTP read API). */
  read<T>(work: (db: EntityManager) => Promise<T>): Promise<T> {
    return work(this.dataSource.manager);
  }
}
