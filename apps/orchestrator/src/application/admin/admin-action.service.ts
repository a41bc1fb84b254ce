import { Injectable } from '@nestjs/common';
import {
  type AdminAction,
  type AdminActionAudited,
  CE_SOURCES,
  ceType,
  TOPICS,
  toKafkaHeaders,
} from '@payments/contracts';
import { messageTraceparent } from '@payments/observability';
import { type AdminPrincipal, scopedEndpoints } from '../../domain/admin/admin-tokens';
import { UNKNOWN_SINCE } from '../queries/admin-query.service';
import { SagaActions } from './saga-actions';
import type { OutboxRow } from '../../runtime/outbox/outbox-rows';
import { OutboxWriter } from '../../runtime/outbox/outbox.writer';
import { Database } from '../../persistence/database';
import { AdminAuditEntity } from '../../persistence/entities';
import { Clock, IdGenerator } from '../../runtime/clock';

export type ActionResult =
  | {
      readonly kind: 'accepted';
      readonly auditId: string;
      readonly commandId: string;
      readonly commandType: string;
    }
  | { readonly kind: 'not-found' }
  | { readonly kind: 'not-applicable'; readonly message: string }
  /** The saga's state does not take the action now (or not from this person): nothing was sent. */
  | { readonly kind: 'not-allowed'; readonly code: string; readonly message: string }
  | { readonly kind: 'invalid'; readonly message: string };

/**
 * An operator's action on a saga in the token's scope (another merchant's saga is not found): the
 * command it means (domain/admin/admin-actions.ts), checked by the same catalogue the commands
 * consumer uses and put to the saga's own flow on its current state (saga-actions.ts: an action
 * the state does not take is refused before any command exists), then — in ONE transaction — the
 * audit row, the command
 * as an outbox row for `payments.commands.v1` and the `admin-action-audited` event for
 * `payments.admin.audit.v1`. The relay publishes both; the command enters the saga like any other,
 * so the action and its audit can never part (no audit without the command, no command without it).
 */
@Injectable()
export class AdminActionService {
  constructor(
    private readonly db: Database,
    private readonly outbox: OutboxWriter,
    private readonly clock: Clock,
    private readonly ids: IdGenerator,
    private readonly sagaActions: SagaActions,
  ) {}

  async act(
    principal: AdminPrincipal,
    sagaId: string,
    action: AdminAction,
    reason: string,
  ): Promise<ActionResult> {
    return this.db.transaction(async (tx) => {
      const endpoints = scopedEndpoints(principal.scope);
      const [saga] = await tx.query<
        Array<{
          id: string;
          flow: string;
          endpoint_id: string;
          state: unknown;
          unknown_since: string | null;
        }>
      >(
        `SELECT s.id, s.flow, s.endpoint_id, s.state, ${UNKNOWN_SINCE} AS unknown_since
           FROM sagas s WHERE s.id = $1 AND ($2::text[] IS NULL OR s.endpoint_id = ANY($2))`,
        [sagaId, endpoints ?? null],
      );
      if (saga === undefined) return { kind: 'not-found' };
      const now = this.clock.now();
      const commandId = this.ids.next();
      const built = this.sagaActions.prepare(
        principal,
        {
          id: saga.id,
          flow: saga.flow,
          endpointId: saga.endpoint_id,
          state: saga.state,
          unknownSince: saga.unknown_since,
        },
        action,
        reason,
        commandId,
        now,
      );
      if (!built.ok) {
        return built.kind === 'not-allowed'
          ? { kind: 'not-allowed', code: built.code, message: built.message }
          : { kind: built.kind, message: built.message };
      }
      const auditId = this.ids.next();
      const audited: AdminActionAudited = {
        type: 'admin-action-audited',
        auditId,
        actor: principal.name,
        role: principal.role,
        action,
        sagaId,
        flow: saga.flow,
        reason,
        commandId,
        commandType: built.command.type,
        occurredAt: now.toISOString(),
      };
      await tx
        .createQueryBuilder()
        .insert()
        .into(AdminAuditEntity)
        .values({ ...auditFields(audited), id: auditId, at: now })
        .updateEntity(false)
        .execute();
      // One trace for the action (the admin request's, when traced): the command and its audit
      // event are siblings in it.
      const traceparent = messageTraceparent(TOPICS.commands);
      const row = (id: string, topic: string, type: string, payload: object): OutboxRow => ({
        id,
        topic,
        key: sagaId,
        headers: toKafkaHeaders({
          id,
          type,
          source: CE_SOURCES.admin,
          subject: sagaId,
          time: now.toISOString(),
          traceparent,
        }),
        payload,
        aggregateId: sagaId,
      });
      await this.outbox.enqueue(tx, [
        row(commandId, TOPICS.commands, ceType.command(built.command.type), built.command),
        row(auditId, TOPICS.adminAudit, ceType.admin(audited.type), audited),
      ]);
      return { kind: 'accepted', auditId, commandId, commandType: built.command.type };
    });
  }
}

/** The audit row's columns are the audit event's fields (the row adds its id and time). */
function auditFields(event: AdminActionAudited) {
  const { type: _type, auditId: _id, occurredAt: _at, ...fields } = event;
  return fields;
}
