import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** `reconciliation_runs` (migration Reconciliation1767900000000): one row per run. */
@Entity({ name: 'reconciliation_runs' })
@Index('reconciliation_runs_scheduled_uq', ['windowFrom'], {
  unique: true,
  where: "trigger = 'scheduled'::text",
})
export class ReconciliationRunEntity {
  @PrimaryColumn({ name: 'id', type: 'uuid' })
  id!: string;

  @Column({ name: 'trigger', type: 'text' })
  trigger!: string;

  @Column({ name: 'requested_by', type: 'text' })
  requestedBy!: string;

  @Column({ name: 'window_from', type: 'timestamptz' })
  windowFrom!: Date;

  @Column({ name: 'window_to', type: 'timestamptz' })
  windowTo!: Date;

  @Column({ name: 'endpoint_id', type: 'text', nullable: true })
  endpointId!: string | null;

  @Column({ name: 'status', type: 'text' })
  status!: string;

  @Column({ name: 'started_at', type: 'timestamptz' })
  startedAt!: Date;

  @Column({ name: 'completed_at', type: 'timestamptz', nullable: true })
  completedAt!: Date | null;
}

/**
 * `reconciliation_checks` (migrations Reconciliation1767900000000, ReconciliationLookups1768200000000):
 * per saga of a run, the check of its order, and the lookup by its client order id when asked.
 */
@Entity({ name: 'reconciliation_checks' })
@Index('reconciliation_checks_request_uq', ['requestId'], { unique: true })
@Index('reconciliation_checks_due_idx', ['nextAt'], { where: "state <> 'done'::text" })
export class ReconciliationCheckEntity {
  @PrimaryColumn({ name: 'run_id', type: 'uuid' })
  runId!: string;

  @PrimaryColumn({ name: 'saga_id', type: 'uuid' })
  sagaId!: string;

  /** `order` | `client-order-id` (domain/reconciliation/reconciliation.ts CheckSubject). */
  @PrimaryColumn({ name: 'subject', type: 'text', default: 'order' })
  subject!: string;

  @Column({ name: 'request_id', type: 'uuid' })
  requestId!: string;

  @Column({ name: 'flow', type: 'text' })
  flow!: string;

  @Column({ name: 'endpoint_id', type: 'text' })
  endpointId!: string;

  @Column({ name: 'expectation', type: 'jsonb' })
  expectation!: unknown;

  @Column({ name: 'state', type: 'text' })
  state!: string;

  @Column({ name: 'attempts', type: 'integer', default: 0 })
  attempts!: number;

  /** Attempts our own adapter held back (not-sent with retryAt): not spent (migration ReconciliationHolds1769870000000). */
  @Column({ name: 'holds', type: 'integer', default: 0 })
  holds!: number;

  @Column({ name: 'next_at', type: 'timestamptz' })
  nextAt!: Date;

  @Column({ name: 'verdict', type: 'text', nullable: true })
  verdict!: string | null;

  @Column({ name: 'gateway', type: 'jsonb', nullable: true })
  gateway!: unknown;
}
