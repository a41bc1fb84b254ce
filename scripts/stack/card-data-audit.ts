import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Kafka } from 'kafkajs';
import { Client } from 'pg';
import { findCardNumbers, isCardSecurityCodeField, maskCardNumbers } from '@payments/core';
import { listTopics, scanTopics } from './kafka-io';

/**
 * The card-data audit: after a run of the stack, every log line of every app, every
 * row of every table of every database it used and every message (key, value, headers) on every
 * `payments.*` topic is scanned for what must never be stored or shown:
 *  - card numbers: Luhn-valid digit runs, by libs/core's detector (the one the apps mask with);
 *  - CVVs as fields: a card-security-code field name (core's list) with a 3–4 digit value;
 *  - control keys: the merchants' secrets given in `secrets`;
 *  - private keys: PEM `-----BEGIN … PRIVATE KEY-----` markers;
 *  - signatures: `control=<40 hex>` (query/form), `"control":"<40 hex>"` (JSON) and
 *    `oauth_signature` with a value.
 * Three exemptions, all identifiers that core's detector reads as cards one time in ten:
 *  - pino's `"time":<epoch ms>` at the start of a JSON log line (a 13-digit number);
 *  - W3C `traceparent` values (`00-<32 hex>-<16 hex>-<2 hex>`) whole: a span id is all decimal
 *    digits one time in 1,800 and then Luhn-valid one time in ten (the default chaos run had
 *    12 such findings in ≈ 20,000 messages and rows);
 *  - hex identifiers of exactly 16, 32, 40 or 64 hex digits with at least one letter, standing
 *    alone (W3C trace and span ids in `traceparent`, SHA-1 and SHA-256 digests of commands):
 *    their digit runs touch letters, which core's detector allows, so they are blanked before
 *    the scan, as core blanks UUIDs. A card written inside such a token is not a card anyone
 *    could read back.
 * Findings carry where and which rule, with card numbers masked and secrets blanked, never the
 * value itself.
 */
export type AuditRule = 'card-number' | 'cvv-field' | 'control-key' | 'private-key' | 'signature';

export interface AuditFinding {
  readonly rule: AuditRule;
  /** `log <file>:<line>`, `db <database>.<table> row <n>`, `topic <topic>/<partition>@<offset>`. */
  readonly where: string;
  /** Up to 80 characters around the finding, masked (card numbers, secrets, signatures). */
  readonly excerpt: string;
}

export interface AuditReport {
  readonly logFiles: number;
  readonly logLines: number;
  readonly databases: number;
  readonly tables: number;
  readonly rows: number;
  readonly topics: number;
  readonly messages: number;
  /** Commands-topic messages skipped as `deliberateCommandKeys`. */
  readonly skipped: number;
  readonly findings: AuditFinding[];
}

export interface AuditTarget {
  /** Directories whose files (recursively) are log files, one line per entry. */
  readonly logDirs?: readonly string[];
  /** PostgreSQL URLs: every table of every schema but the system ones is read. */
  readonly databaseUrls?: readonly string[];
  /** The broker to read `payments.*` topics from. */
  readonly kafka?: Kafka;
  /** Where to start per `<topic>/<partition>` (a shared broker: what this suite wrote). */
  readonly topicOffsets?: ReadonlyMap<string, number>;
  /**
   * Messages a test produced with card data on purpose (a plain-card command it expects to be
   * rejected), by record key: skipped on the commands topic only, and counted.
   */
  readonly deliberateCommandKeys?: ReadonlySet<string>;
  /** Secrets that must appear nowhere (control keys of the merchants in use). */
  readonly secrets?: readonly string[];
}

const PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----/;
const SIGNATURES = [
  /(?<![A-Za-z0-9_])control=[0-9a-fA-F]{40}(?![0-9a-fA-F])/,
  /"control"\s*:\s*"[0-9a-fA-F]{40}"/,
  /oauth_signature(?:=|"\s*:\s*"|%3D)"?(?!\[REDACTED\])[A-Za-z0-9%+/=]{8,}/,
];
/** `"name":"123"`, `"name":123`, `name=123` (form, query, text). */
const FIELD_VALUE =
  /"([^"\\]{1,64})"\s*:\s*"?(\d+)"?|(?<![A-Za-z0-9_])([A-Za-z][A-Za-z0-9_-]{1,63})=(\d+)/g;
const TRACEPARENT =
  /(?<![0-9A-Za-z-])[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}(?![0-9A-Za-z-])/g;
const HEX_ID =
  /(?<![0-9A-Za-z])(?=[0-9a-f]*[a-f])(?:[0-9a-f]{64}|[0-9a-f]{40}|[0-9a-f]{32}|[0-9a-f]{16})(?![0-9A-Za-z])/g;
const PINO_TIME = /^(\{"level":[^,]{1,10},)"time":\d{10,16},/;
const COMMANDS_TOPIC = 'payments.commands.v1';

/** Findings in one text; `where` names it. */
export function scanText(
  text: string,
  where: string,
  secrets: readonly string[] = [],
): AuditFinding[] {
  const found: AuditFinding[] = [];
  const excerpt = (at: number) =>
    blank(maskCardNumbers(text.slice(Math.max(0, at - 30), at + 50)), secrets);
  const cardText = text
    .replace(TRACEPARENT, (id) => ' '.repeat(id.length))
    .replace(HEX_ID, (id) => ' '.repeat(id.length));
  for (const card of findCardNumbers(cardText)) {
    found.push({ rule: 'card-number', where, excerpt: excerpt(card.start) });
  }
  for (const m of text.matchAll(FIELD_VALUE)) {
    const name = m[1] ?? m[3] ?? '';
    const value = m[2] ?? m[4] ?? '';
    if (isCardSecurityCodeField(name) && /^\d{3,4}$/.test(value)) {
      found.push({
        rule: 'cvv-field',
        where,
        excerpt: excerpt(m.index).replace(/\d{3,4}/g, '***'),
      });
    }
  }
  const lower = text.toLowerCase();
  for (const secret of secrets) {
    const at = lower.indexOf(secret.toLowerCase());
    if (at >= 0) found.push({ rule: 'control-key', where, excerpt: excerpt(at) });
  }
  const key = PRIVATE_KEY.exec(text);
  if (key) found.push({ rule: 'private-key', where, excerpt: key[0] });
  for (const pattern of SIGNATURES) {
    const m = pattern.exec(text);
    if (m) found.push({ rule: 'signature', where, excerpt: m[0].replace(/[0-9a-fA-F]{8,}/g, '…') });
  }
  return found;
}

function blank(text: string, secrets: readonly string[]): string {
  let out = text.replace(/[0-9a-fA-F]{40}/g, '<40 hex>');
  for (const s of secrets) out = out.split(s).join('<secret>');
  return out;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? filesUnder(file) : [file];
  });
}

/** Every row of every table outside the system schemas, as PostgreSQL's text of the row. */
export async function forEachRow(
  url: string,
  visit: (table: string, row: string, index: number) => void,
): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const tables = await client.query<{ schema: string; name: string }>(
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    for (const { schema, name } of tables.rows) {
      const rows = await client.query<{ row: string }>(
        `SELECT t::text AS row FROM "${schema}"."${name}" t`,
      );
      rows.rows.forEach((r, i) => visit(`${schema}.${name}`, r.row, i));
    }
    return tables.rows.length;
  } finally {
    await client.end();
  }
}

export async function auditCardData(target: AuditTarget): Promise<AuditReport> {
  const secrets = target.secrets ?? [];
  const findings: AuditFinding[] = [];
  let logFiles = 0;
  let logLines = 0;
  for (const dir of target.logDirs ?? []) {
    for (const file of filesUnder(dir)) {
      logFiles += 1;
      const lines = readFileSync(file, 'utf8').split('\n');
      lines.forEach((line, i) => {
        if (line.length === 0) return;
        logLines += 1;
        findings.push(...scanText(line.replace(PINO_TIME, '$1'), `log ${file}:${i + 1}`, secrets));
      });
    }
  }
  let tables = 0;
  let rows = 0;
  for (const url of target.databaseUrls ?? []) {
    const database = new URL(url).pathname.slice(1);
    tables += await forEachRow(url, (table, row, i) => {
      rows += 1;
      findings.push(...scanText(row, `db ${database}.${table} row ${i + 1}`, secrets));
    });
  }
  let topics = 0;
  let messages = 0;
  let skipped = 0;
  if (target.kafka) {
    const names = await listTopics(target.kafka, 'payments.');
    topics = names.length;
    messages = await scanTopics(
      target.kafka,
      names,
      (m) => {
        const key = m.key?.toString('utf8') ?? '';
        if (m.topic === COMMANDS_TOPIC && target.deliberateCommandKeys?.has(key)) {
          skipped += 1;
          return;
        }
        const headers = Object.entries(m.headers).map(([k, v]) => `${k}=${v}`);
        const text = [key, m.value?.toString('utf8') ?? '', ...headers].join('\n');
        findings.push(...scanText(text, `topic ${m.topic}/${m.partition}@${m.offset}`, secrets));
      },
      target.topicOffsets,
    );
  }
  return {
    logFiles,
    logLines,
    databases: target.databaseUrls?.length ?? 0,
    tables,
    rows,
    topics,
    messages,
    skipped,
    findings,
  };
}

export function formatAudit(report: AuditReport): string {
  const lines = [
    `card-data audit: ${report.logLines} log lines in ${report.logFiles} files, ${report.rows} rows in ${report.tables} tables of ${report.databases} databases, ${report.messages} messages on ${report.topics} topics${report.skipped ? ` (${report.skipped} deliberate plain-card commands skipped)` : ''}`,
    `  findings: ${report.findings.length}`,
  ];
  for (const f of report.findings.slice(0, 20))
    lines.push(`    ${f.rule}  ${f.where}  ${f.excerpt}`);
  if (report.findings.length > 20) lines.push(`    … ${report.findings.length - 20} more`);
  return lines.join('\n');
}
