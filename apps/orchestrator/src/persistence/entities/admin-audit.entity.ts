import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** `admin_audit` (migrations AdminAudit1767800000000, CaseAudit1769900000001): one row per operator action or case step. */
@Entity({ name: 'admin_audit' })
@Index('admin_audit_saga_idx', ['sagaId', 'at'])
@Index('admin_audit_at_idx', ['at'])
@Index('admin_audit_case_idx', ['caseId', 'at'], { where: 'case_id IS NOT NULL' })
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

  /** Null for a case's step that sent no command (migration CaseAudit1769900000001). */
  @Column({ name: 'command_id', type: 'uuid', nullable: true })
  commandId!: string | null;

  @Column({ name: 'command_type', type: 'text', nullable: true })
  commandType!: string | null;

  /** A case's step: its case (else null). */
  @Column({ name: 'case_id', type: 'uuid', nullable: true })
  caseId!: string | null;

  /** A case's step: the decision, the amount of a "done", the evidence seen. */
  @Column({ name: 'detail', type: 'jsonb', nullable: true })
  detail!: Record<string, unknown> | null;
}
