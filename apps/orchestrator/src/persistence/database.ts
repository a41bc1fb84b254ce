import { Injectable } from '@nestjs/common';
import { retryOnFailover } from '@payments/database';
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

  /**
   * The saga runtime's unit of work: a transaction that is re-run after a failover — when no
   * primary was reachable or a standby refused it (not applied) and also when the connection broke
   * with its COMMIT outcome unknown. Safe because the unit is idempotent by its inbox: a gateway
   * result or callback records its inbox row, a command its command record, a timer its claim, in
   * the same transaction; a re-run of a unit that did commit finds them and writes nothing again
   * (a command's repeat is answered as the duplicate it is). `work` must touch nothing but the
   * database (the outbox carries everything else). Gives up after DEFAULT_FAILOVER_RETRY's 30 s:
   * the consumer's own retry and readiness take over.
   */
  unitOfWork<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return retryOnFailover(
      () => this.dataSource.transaction(work),
      ['not-applied', 'outcome-unknown'],
    );
  }

  /** Reads outside a transaction (the HTTP read API). */
  read<T>(work: (db: EntityManager) => Promise<T>): Promise<T> {
    return work(this.dataSource.manager);
  }

  /**
   * Reads that must agree with each other (a saga's row and its history): one read-only
   * REPEATABLE READ transaction, so every statement sees the same snapshot. Outside one, a unit of
   * work committing between two statements gave a saga's detail a status older than its history
   * (session 18: the console's progress box listed `paid-out` beside the status `paying`).
   */
  snapshot<T>(work: (db: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction('REPEATABLE READ', async (tx) => {
      await tx.query('SET TRANSACTION READ ONLY');
      return work(tx);
    });
  }
}
