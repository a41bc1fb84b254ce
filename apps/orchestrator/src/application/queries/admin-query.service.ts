import { Injectable } from '@nestjs/common';
import {
  type GatewayRequestAnswer,
  type MoneyFigures,
  type SagaDetail,
  type SagaPage,
  type SagaSummary,
  SEALED_CARD_FIELDS,
  TOPICS,
} from '@payments/contracts';

export type { MoneyFigures, SagaDetail, SagaPage, SagaSummary };
import { type AdminPrincipal, scopedEndpoints } from '../../domain/admin/admin-tokens';
import { Database } from '../../persistence/database';
import { Clock } from '../../runtime/clock';
import { SagaActions } from '../admin/saga-actions';

/** Filters of GET /admin/sagas; every one optional. Amounts in minor units. */
export interface SagaSearch {
  /** The token's merchants (undefined: every merchant): a saga outside them is never listed. */
  readonly endpoints?: readonly string[];
  readonly flow?: string;
  readonly status?: string;
  readonly endpoint?: string;
  /** The merchant's order id (client_orderid): unique per endpoint. */
  readonly merchantOrderId?: string;
  readonly from?: Date;
  readonly to?: Date;
  readonly currency?: string;
  readonly minAmount?: number;
  readonly maxAmount?: number;
  /** Only sagas whose outcome has been unknown for longer than this. */
  readonly unknownOlderThanSeconds?: number;
  readonly limit: number;
  readonly cursor?: string;
}

/** Thrown for a cursor this API did not hand out. */
export class BadCursorError extends Error {}

interface SagaRowSql {
  id: string;
  flow: string;
  kind: string | null;
  status: string;
  endpoint_id: string;
  client_order_id: string | null;
  version: number;
  amount_minor: string | null;
  currency: string | null;
  unknown_since: string | null;
  approval_deadline: string | null;
  created_at: Date;
  updated_at: Date;
  state?: unknown;
}

// The amount, currency and unknown-since of any flow's state: the in-flight operation's, else the
// saga's own (payouts, transfers, schedules keep `amount`), else what the saga first requested (a
// card payment's first event, `operation-requested`, names it: a declined, failed or settled
// payment keeps no amount in its state but was asked for one), else a payment's authorized sum.
const AMOUNT = `COALESCE((s.state->'inFlight'->'amount'->>'minor')::bigint,
  (s.state->'amount'->>'minor')::bigint,
  (SELECT (h.event->'amount'->>'minor')::bigint FROM saga_history h
    WHERE h.saga_id = s.id AND h.version = 1),
  NULLIF((s.state->>'authorized')::bigint, 0))`;
const CURRENCY = `COALESCE(s.state->'inFlight'->'amount'->>'currency', s.state->'amount'->>'currency',
  s.state->>'currency')`;
/** Of the sagas aliased `s`; saga-gauges.ts counts unknown outcomes with the same expression. */
export const UNKNOWN_SINCE = `COALESCE(s.state->'inFlight'->>'unknownSince', s.state->>'unknownSince')`;
const COLUMNS = `s.id, s.flow, s.kind, s.status, s.endpoint_id, s.client_order_id, s.version, ${AMOUNT} AS amount_minor,
  ${CURRENCY} AS currency, ${UNKNOWN_SINCE} AS unknown_since,
  s.state->>'approvalDeadline' AS approval_deadline, s.created_at, s.updated_at`;

function summary(row: SagaRowSql): SagaSummary {
  return {
    id: row.id,
    flow: row.flow,
    kind: row.kind,
    status: row.status,
    endpointId: row.endpoint_id,
    merchantOrderId: row.client_order_id,
    version: row.version,
    amount:
      row.amount_minor === null || row.currency === null
        ? null
        : { minor: Number(row.amount_minor), currency: row.currency },
    unknownSince: row.unknown_since,
    approvalDeadline: row.approval_deadline,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

function moneyOf(state: unknown): MoneyFigures | null {
  if (typeof state !== 'object' || state === null) return null;
  const s = state as Record<string, unknown>;
  const { currency, authorized, captured, returned } = s;
  if (
    typeof currency !== 'string' ||
    typeof authorized !== 'number' ||
    typeof captured !== 'number' ||
    typeof returned !== 'number'
  ) {
    return null;
  }
  // A hold that was voided, released or expired before any capture charges nothing.
  const holdGone = s.status === 'voided' || s.holdReleased === true || s.holdExpired === true;
  const charged = captured > 0 ? captured : holdGone ? returned : authorized;
  return {
    currency,
    authorized,
    captured,
    returned,
    remaining: Math.max(0, charged - returned),
  };
}

/** The events of an operation in flight that are not its outcome (every flow's, by suffix). */
const LIFECYCLE = ['accepted-by-gateway', 'outcome-unknown', 'action-required', 'operation-resent'];

/**
 * What the history says of one request: its latest event naming it (`requestId`) and that
 * event's code, with the gateway's serial (`serialNumber`) from whichever event named it last. Reads the events as stored, so a field an event does not have is simply null.
 */
export function answerOf(
  requestId: string,
  history: ReadonlyArray<{ event_type: string; occurred_at: Date; event: unknown }>,
): GatewayRequestAnswer | null {
  const text = (e: Record<string, unknown>, key: string) =>
    typeof e[key] === 'string' ? e[key] : null;
  const naming = history
    .map((h) => ({
      h,
      e: (typeof h.event === 'object' && h.event !== null ? h.event : {}) as Record<
        string,
        unknown
      >,
    }))
    .filter(({ e }) => e.requestId === requestId);
  // A serial learnt after the request's outcome (an accepted-by-gateway after it: issue #35,
  // domain/gateway-operation/operation-serial.ts) names the serial only; the answer stays the outcome.
  const settled = (i: number) =>
    naming.slice(1, i).some(({ h }) => !LIFECYCLE.some((suffix) => h.event_type.endsWith(suffix)));
  const latest = naming
    .filter(({ h }, i) => !(h.event_type.endsWith('accepted-by-gateway') && settled(i)))
    .at(-1);
  if (latest === undefined) return null;
  // The serial the gateway gave it is named once (accepted-by-gateway); later events may not.
  const serial =
    naming
      .map(({ e }) => text(e, 'serialNumber') ?? text(e, 'serial'))
      .filter((v) => v !== null)
      .at(-1) ?? null;
  return {
    result: latest.h.event_type,
    serial,
    code: text(latest.e, 'code'),
    at: latest.h.occurred_at.toISOString(),
  };
}

function encodeCursor(row: SagaRowSql): string {
  return Buffer.from(JSON.stringify([row.created_at.toISOString(), row.id])).toString('base64url');
}

function decodeCursor(cursor: string): [string, string] {
  try {
    const value = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (
      Array.isArray(value) &&
      value.length === 2 &&
      typeof value[0] === 'string' &&
      !Number.isNaN(Date.parse(value[0])) &&
      typeof value[1] === 'string' &&
      /^[0-9a-f-]{36}$/.test(value[1])
    ) {
      return [value[0], value[1]];
    }
  } catch {
    // answered below
  }
  throw new BadCursorError('cursor is not one this API handed out');
}

/**
 * Reads for the admin API (no locks, no writes). Raw SQL: the filters read jsonb paths of every
 * flow's state and the page is keyset-paginated on (created_at, id) — both awkward in the query
 * builder; every value is a bound parameter.
 */
@Injectable()
export class AdminQueryService {
  constructor(
    private readonly db: Database,
    private readonly sagaActions: SagaActions,
    private readonly clock: Clock,
  ) {}

  async search(search: SagaSearch): Promise<SagaPage> {
    const where: string[] = [];
    const params: unknown[] = [];
    const bind = (value: unknown) => {
      params.push(value);
      return `$${params.length}`;
    };
    if (search.endpoints !== undefined) {
      where.push(`s.endpoint_id = ANY(${bind(search.endpoints)}::text[])`);
    }
    if (search.flow !== undefined) where.push(`s.flow = ${bind(search.flow)}`);
    if (search.status !== undefined) where.push(`s.status = ${bind(search.status)}`);
    if (search.endpoint !== undefined) where.push(`s.endpoint_id = ${bind(search.endpoint)}`);
    if (search.merchantOrderId !== undefined) {
      where.push(`s.client_order_id = ${bind(search.merchantOrderId)}`);
    }
    if (search.from !== undefined) where.push(`s.created_at >= ${bind(search.from)}`);
    if (search.to !== undefined) where.push(`s.created_at < ${bind(search.to)}`);
    if (search.currency !== undefined) where.push(`${CURRENCY} = ${bind(search.currency)}`);
    if (search.minAmount !== undefined) where.push(`${AMOUNT} >= ${bind(search.minAmount)}`);
    if (search.maxAmount !== undefined) where.push(`${AMOUNT} <= ${bind(search.maxAmount)}`);
    if (search.unknownOlderThanSeconds !== undefined) {
      where.push(
        `(${UNKNOWN_SINCE})::timestamptz <= now() - make_interval(secs => ${bind(search.unknownOlderThanSeconds)})`,
      );
    }
    if (search.cursor !== undefined) {
      const [createdAt, id] = decodeCursor(search.cursor);
      where.push(`(s.created_at, s.id) < (${bind(createdAt)}::timestamptz, ${bind(id)}::uuid)`);
    }
    const sql = `SELECT ${COLUMNS} FROM sagas s
      ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
      ORDER BY s.created_at DESC, s.id DESC LIMIT ${bind(search.limit + 1)}`;
    const rows = await this.db.read((db) => db.query<SagaRowSql[]>(sql, params));
    const page = rows.slice(0, search.limit);
    const last = page.at(-1);
    return {
      items: page.map(summary),
      ...(rows.length > search.limit && last !== undefined
        ? { nextCursor: encodeCursor(last) }
        : {}),
    };
  }

  /** One saga as `principal` may see it: undefined when there is none in the token's scope. */
  async detail(id: string, principal: AdminPrincipal): Promise<SagaDetail | undefined> {
    const endpoints = scopedEndpoints(principal.scope);
    // One snapshot: the saga's status and its history, events and requests agree.
    return this.db.snapshot(async (db) => {
      const [row] = await db.query<SagaRowSql[]>(
        `SELECT ${COLUMNS}, s.state FROM sagas s
          WHERE s.id = $1 AND ($2::text[] IS NULL OR s.endpoint_id = ANY($2))`,
        [id, endpoints ?? null],
      );
      if (row === undefined) return undefined;
      const [history, events, requests, audit] = await Promise.all([
        db.query<Array<{ version: number; event_type: string; occurred_at: Date; event: unknown }>>(
          `SELECT version, event_type, occurred_at, event FROM saga_history
            WHERE saga_id = $1 ORDER BY version`,
          [id],
        ),
        db.query<Array<{ id: string; type: string; published_at: Date | null; sequence: string }>>(
          `SELECT id, payload->>'type' AS type, published_at, sequence::text FROM outbox
            WHERE aggregate_id = $1 AND topic = $2 ORDER BY sequence`,
          [id, TOPICS.events],
        ),
        db.query<Array<{ request_id: string; operation: string; created_at: Date; body: unknown }>>(
          `SELECT request_id, operation, created_at, body - $2::text[] AS body
             FROM gateway_requests WHERE saga_id = $1 ORDER BY created_at`,
          [id, SEALED_CARD_FIELDS],
        ),
        db.query<
          Array<{
            id: string;
            at: Date;
            actor: string;
            role: string;
            action: string;
            reason: string;
            command_id: string | null;
            command_type: string | null;
            case_id: string | null;
          }>
        >(
          `SELECT id, at, actor, role, action, reason, command_id, command_type, case_id FROM admin_audit
            WHERE saga_id = $1 ORDER BY at`,
          [id],
        ),
      ]);
      return {
        saga: { ...summary(row), state: row.state },
        money: moneyOf(row.state),
        actions: this.sagaActions.offered(
          principal,
          {
            id: row.id,
            flow: row.flow,
            endpointId: row.endpoint_id,
            state: row.state,
            unknownSince: row.unknown_since,
          },
          this.clock.now(),
        ),
        history: history.map((h) => ({
          version: h.version,
          type: h.event_type,
          occurredAt: h.occurred_at.toISOString(),
          event: h.event,
        })),
        events: events.map((e) => ({
          id: e.id,
          type: e.type,
          publishedAt: e.published_at?.toISOString() ?? null,
          sequence: e.sequence,
        })),
        gatewayRequests: requests.map((r) => ({
          requestId: r.request_id,
          operation: r.operation,
          createdAt: r.created_at.toISOString(),
          request: r.body,
          answer: answerOf(r.request_id, history),
        })),
        audit: audit.map((a) => ({
          id: a.id,
          at: a.at.toISOString(),
          actor: a.actor,
          role: a.role,
          action: a.action,
          reason: a.reason,
          commandId: a.command_id,
          commandType: a.command_type,
          caseId: a.case_id,
        })),
      };
    });
  }
}
