import { Injectable } from '@nestjs/common';
import { DataSource, type QueryRunner } from 'typeorm';

/** SQL on one connection: the rows a statement returned, or how many it changed. */
export class Sql {
  constructor(private readonly runner: QueryRunner) {}

  async rows<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    const result = await this.runner.query(sql, params, true);
    return (result.records ?? []) as T[];
  }

  async affected(sql: string, params: unknown[] = []): Promise<number> {
    const result = await this.runner.query(sql, params, true);
    return result.affected ?? 0;
  }
}

/**
 * The orchestrator's access to PostgreSQL through TypeORM's DataSource: a unit of work is one
 * transaction (READ COMMITTED; rows that must not change underneath are locked FOR UPDATE).
 */
@Injectable()
export class Database {
  constructor(private readonly dataSource: DataSource) {}

  async transaction<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      try {
        const result = await work(new Sql(runner));
        await runner.commitTransaction();
        return result;
      } catch (error) {
        if (runner.isTransactionActive) await runner.rollbackTransaction();
        throw error;
      }
    } finally {
      await runner.release();
    }
  }

  /** Reads outside a transaction (the HTTP read API). */
  async read<T>(work: (sql: Sql) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    await runner.connect();
    try {
      return await work(new Sql(runner));
    } finally {
      await runner.release();
    }
  }
}
