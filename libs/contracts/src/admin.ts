import { z } from 'zod';
import { Instant, Uuid } from './primitives';

/**
 * The operators' admin API: what an operator may ask of a saga, and the audit event
 * each action leaves on `payments.admin.audit.v1` (key: the saga id). The action itself enters as an
 * ordinary command on `payments.commands.v1`, in the same transaction as its audit.
 */
export const ADMIN_ACTIONS = [
  'refresh-status',
  'resolve-unknown',
  'approve',
  'reject',
  'pause',
  'resume',
  'cancel',
] as const;
export const AdminAction = z.enum(ADMIN_ACTIONS);
export type AdminAction = z.infer<typeof AdminAction>;

export const AdminRole = z.enum(['viewer', 'operator']);
export type AdminRole = z.infer<typeof AdminRole>;

/** One operator action: who (the token's name and role), why, on which saga, and the command sent. */
export const AdminActionAudited = z.strictObject({
  type: z.literal('admin-action-audited'),
  auditId: Uuid,
  actor: z.string().min(1).max(128),
  role: AdminRole,
  action: AdminAction,
  sagaId: Uuid,
  flow: z.string().min(1).max(64),
  reason: z.string().min(1).max(1024),
  commandId: Uuid,
  commandType: z.string().min(1).max(64),
  occurredAt: Instant,
});
export type AdminActionAudited = z.infer<typeof AdminActionAudited>;
