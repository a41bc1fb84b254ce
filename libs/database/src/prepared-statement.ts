import { createHash } from 'node:crypto';

/**
 * Hot-path SQL as fixed parameterised text and the name `pg` prepares it under: PostgreSQL parses
 * and plans a named statement once per connection instead of on every call. The name follows the
 * text (a digest), so a changed text is a new statement; the prefix keeps apps sharing a server
 * apart in `pg_prepared_statements`. Values only ever travel as parameters.
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

export function preparedStatement(prefix: string, label: string, text: string): PreparedStatement {
  const digest = createHash('sha1').update(text).digest('hex').slice(0, 12);
  return { name: `${prefix}_${label}_${digest}`, text };
}
