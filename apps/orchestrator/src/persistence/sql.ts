import { type PreparedStatement, preparedStatement } from '@payments/database';
import type { EntityManager } from 'typeorm';

/**
 * Hot-path SQL as fixed parameterised text (libs/database `preparedStatement`): each statement is
 * parsed and planned by PostgreSQL once per connection instead of being built by TypeORM's query
 * builder per message.
 */
export type Statement = PreparedStatement;

export function statement(label: string, text: string): Statement {
  return preparedStatement('orch', label, text);
}

/** A statement assembled at run time from fixed pieces: named once per distinct text. */
const assembled = new Map<string, Statement>();
export function assembledStatement(label: string, text: string): Statement {
  let stmt = assembled.get(text);
  if (stmt === undefined) {
    stmt = statement(label, text);
    assembled.set(text, stmt);
  }
  return stmt;
}

/** What `pg` exposes of a connection: the query with a prepared statement's name. */
interface PgConnection {
  query(config: { name: string; text: string; values: readonly unknown[] }): Promise<{
    rows: unknown[];
  }>;
}

/**
 * Runs `stmt` in the transaction of `tx` (on its connection, as a named prepared statement) and
 * returns its rows. Without a query runner (not in a transaction) it goes through TypeORM unnamed.
 */
export async function runStatement<Row>(
  tx: EntityManager,
  stmt: Statement,
  values: readonly unknown[],
): Promise<Row[]> {
  const runner = tx.queryRunner;
  if (runner === undefined) return tx.query<Row[]>(stmt.text, [...values]);
  const connection = (await runner.connect()) as PgConnection;
  const result = await connection.query({ name: stmt.name, text: stmt.text, values });
  return result.rows as Row[];
}

/**
 * A piece of a statement owned by another writer (the outbox, the timers): common table
 * expressions whose parameters are numbered from `first`, and a select-list expression that makes
 * the statement evaluate them (a CTE with a volatile function runs only when referenced). Its
 * writes happen only where `guard` (an SQL condition of the statement) holds. For a fixed `first`
 * and `guard` the text is fixed.
 */
export interface StatementPart {
  readonly ctes: (first: number, guard: string) => string;
  readonly values: readonly unknown[];
  /** An expression over the part's CTEs, for the statement's select list. */
  readonly result: string;
}

/** Folds parts into one statement's CTE list, numbering their parameters after `used` ones. */
export function withParts(
  used: number,
  parts: readonly StatementPart[],
  guard = 'true',
): { ctes: string; values: unknown[]; results: string[] } {
  let next = used + 1;
  const ctes: string[] = [];
  const values: unknown[] = [];
  for (const part of parts) {
    ctes.push(part.ctes(next, guard));
    values.push(...part.values);
    next += part.values.length;
  }
  return { ctes: ctes.join(',\n'), values, results: parts.map((p) => p.result) };
}
