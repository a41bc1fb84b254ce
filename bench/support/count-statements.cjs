/**
 * Preloaded into an app by the benchmark (BENCH_COUNT_STATEMENTS=1, `node --require`): counts the
 * SQL statements the process sends through `pg` (every Client#query, TypeORM's included), keyed by
 * the statement's text with variable parts folded (parameter lists, VALUES rows). On SIGUSR2 it
 * writes the counts so far to STATEMENT_COUNT_FILE (JSON: { seq, counts }), so the benchmark can
 * take the difference over one mode. Not part of any app; nothing of a statement's values is kept.
 */
'use strict';
const { writeFileSync } = require('node:fs');

const file = process.env.STATEMENT_COUNT_FILE;
const pg = require(require.resolve('pg', { paths: [process.cwd()] }));
const counts = new Map();
let seq = 0;

function key(text) {
  return text
    .replace(/\s+/g, ' ')
    .replace(/\(\$\d+(?:, ?\$\d+)*\)(?:, ?\(\$\d+(?:, ?\$\d+)*\))*/g, '(…)')
    .replace(/\(DEFAULT(?:, ?(?:DEFAULT|\$\d+))*\)/g, '(…)')
    .trim()
    .slice(0, 110);
}

const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(config, ...rest) {
  const text = typeof config === 'string' ? config : config && config.text;
  if (typeof text === 'string') {
    const k = key(text);
    counts.set(k, (counts.get(k) || 0) + 1);
  }
  return query.call(this, config, ...rest);
};

if (file) {
  process.on('SIGUSR2', () => {
    seq += 1;
    writeFileSync(file, JSON.stringify({ seq, counts: Object.fromEntries(counts) }));
  });
}
