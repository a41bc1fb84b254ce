/**
 * Preloaded into every app by the benchmark (`node --require`): counts what the process does that
 * the benchmark breaks a sale's cost into — the SQL statements it sends through `pg` (every
 * Client#query, TypeORM's included; keyed by the statement's text with variable parts folded), the
 * transactions they make (a BEGIN opens one, a statement outside BEGIN … COMMIT is one of its
 * own), and the HTTP requests its servers take (by method and path, ids folded). On SIGUSR2 it
 * writes the counts so far to PROBE_DIR/probe-<pid>.json (JSON: { seq, statements, transactions,
 * http }), so the benchmark takes the difference over one mode, per replica. Not part of any app;
 * nothing of a statement's values or a request's body is kept. Statement texts are fixed (named
 * prepared statements), so each text is folded once and the count is one Map update per query.
 */
'use strict';
const { writeFileSync } = require('node:fs');
const http = require('node:http');
const path = require('node:path');

const dir = process.env.PROBE_DIR;
const statements = new Map();
const http_ = new Map();
const keyOfText = new Map();
let transactions = 0;
let seq = 0;

function fold(text) {
  return text
    .replace(/\s+/g, ' ')
    .replace(/\(\$\d+(?:, ?\$\d+)*\)(?:, ?\(\$\d+(?:, ?\$\d+)*\))*/g, '(…)')
    .replace(/\(DEFAULT(?:, ?(?:DEFAULT|\$\d+))*\)/g, '(…)')
    .trim()
    .slice(0, 110);
}

function keyOf(text) {
  let key = keyOfText.get(text);
  if (key === undefined) {
    key = fold(text);
    if (keyOfText.size < 10_000) keyOfText.set(text, key);
  }
  return key;
}

let pg;
try {
  pg = require(require.resolve('pg', { paths: [process.cwd()] }));
} catch {
  pg = undefined; // an app without a database (callback-ingest, the sandbox)
}
if (pg !== undefined) {
  const query = pg.Client.prototype.query;
  const inTransaction = Symbol('probe.inTransaction');
  pg.Client.prototype.query = function countedQuery(config, ...rest) {
    const text = typeof config === 'string' ? config : config && config.text;
    if (typeof text === 'string') {
      const key = keyOf(text);
      statements.set(key, (statements.get(key) || 0) + 1);
      // Queries on one client run in the order they are queued, so the state follows that order.
      const verb = key.slice(0, 8).toUpperCase();
      if (verb.startsWith('BEGIN') || verb.startsWith('START TR')) {
        this[inTransaction] = true;
        transactions += 1;
      } else if (verb.startsWith('COMMIT') || verb.startsWith('ROLLBACK')) {
        this[inTransaction] = false;
      } else if (!this[inTransaction]) {
        transactions += 1;
      }
    }
    return query.call(this, config, ...rest);
  };
}

const emit = http.Server.prototype.emit;
http.Server.prototype.emit = function countedEmit(event, request, ...rest) {
  if (event === 'request' && request && typeof request.url === 'string') {
    const route = request.url
      .split('?')[0]
      .replace(/\/[0-9a-f-]{8,}(?=\/|$)/gi, '/:id')
      .replace(/\/\d+(?=\/|$)/g, '/:n');
    const key = `${request.method} ${route}`;
    http_.set(key, (http_.get(key) || 0) + 1);
  }
  return emit.call(this, event, request, ...rest);
};

if (dir) {
  process.on('SIGUSR2', () => {
    seq += 1;
    writeFileSync(
      path.join(dir, `probe-${process.pid}.json`),
      JSON.stringify({
        seq,
        statements: Object.fromEntries(statements),
        transactions,
        http: Object.fromEntries(http_),
      }),
    );
  });
}
