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
 * Without PROBE_DIR it patches nothing.
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

/**
 * Whether a statement, sent on a connection in the state `session` ({ open: boolean }), starts a
 * transaction: a BEGIN opens one, a statement outside BEGIN … COMMIT/ROLLBACK is one of its own.
 * Queries on one connection run in the order they are queued, so the state follows that order.
 */
function startsTransaction(session, key) {
  const verb = key.slice(0, 8).toUpperCase();
  if (verb.startsWith('BEGIN') || verb.startsWith('START TR')) {
    session.open = true;
    return true;
  }
  if (verb.startsWith('COMMIT') || verb.startsWith('ROLLBACK')) {
    session.open = false;
    return false;
  }
  return !session.open;
}

let pg;
try {
  pg = require(require.resolve('pg', { paths: [process.cwd()] }));
} catch {
  pg = undefined; // an app without a database (callback-ingest, the sandbox)
}
if (pg !== undefined && dir) {
  const query = pg.Client.prototype.query;
  const session = Symbol('probe.session');
  pg.Client.prototype.query = function countedQuery(config, ...rest) {
    const text = typeof config === 'string' ? config : config && config.text;
    if (typeof text === 'string') {
      const key = keyOf(text);
      statements.set(key, (statements.get(key) || 0) + 1);
      this[session] ??= { open: false };
      if (startsTransaction(this[session], key)) transactions += 1;
    }
    return query.call(this, config, ...rest);
  };
}

/** A request's route: its method and path, ids and numbers folded (`GET /callbacks/gateway/:n`). */
function routeOf(method, url) {
  const route = url
    .split('?')[0]
    .replace(/\/[0-9a-f-]{8,}(?=\/|$)/gi, '/:id')
    .replace(/\/\d+(?=\/|$)/g, '/:n');
  return `${method} ${route}`;
}

if (dir) {
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function countedEmit(event, request, ...rest) {
    if (event === 'request' && request && typeof request.url === 'string') {
      const key = routeOf(request.method, request.url);
      http_.set(key, (http_.get(key) || 0) + 1);
    }
    return emit.call(this, event, request, ...rest);
  };
}

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

// For the probe's unit test; the apps never require this file themselves.
module.exports = { fold, startsTransaction, routeOf };
