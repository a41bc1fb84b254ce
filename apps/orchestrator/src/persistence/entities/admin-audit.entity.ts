import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** `admin_audit` (migration AdminAudit1767800000000): one row per operator action. */
@Entity({ name: 'admin_audit' })
@Index('admin_audit_saga_idx', ['sagaId', 'at'])
@Index('admin_audit_at_idx', ['at'])
export class AdminAuditEntity {
  @PrimaryColumn({ name: 'id', type: 'uuid' })
  id!: string;

  @Column({ name: 'at', type: 'timestamptz' })
  at!: Date;

  @Column({ name: 'actor', type: 'text' })
  actor!: string;

  @Column({ name: 'role', type: 'text' })
  role!: string;

  @Column({ name: 'action', type: 'text' })
  action!: string;

  @Column({ name: 'saga_id', type: 'uuid' })
  sagaId!: string;

  @Column({ name: 'flow', type: 'text' })
  flow!: string;

  @Column({ name: 'reason', type: 'text' })
  reason!: string;

  @Column({ name: 'command_id', type: 'uuid' })
  commandId!: string;

  @Column({ name: 'command_type', type: 'text' })
  commandType!: string;
}
