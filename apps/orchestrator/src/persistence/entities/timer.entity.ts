import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { SagaEntity } from './saga.entity';

/**
 * `timers` (migrations Payments1767312000000, Sagas1767600000000, TimerScope1769810000000): one
 * row per (flow, saga, kind, scope).
 */
@Entity({ name: 'timers' })
@Index('timers_due_idx', ['dueAt'])
export class TimerEntity {
  @PrimaryColumn({ name: 'flow', type: 'text' })
  flow!: string;

  @PrimaryColumn({ name: 'saga_id', type: 'uuid' })
  @ForeignKey(() => SagaEntity, { name: 'timers_saga_id_fkey' })
  sagaId!: string;

  /** A kind of the flow's decider, or the runtime's own `gateway-resend`. */
  @PrimaryColumn({ name: 'kind', type: 'text' })
  kind!: string;

  /** The request id of the operation the timer belongs to; '' for the saga's own timers. */
  @PrimaryColumn({ name: 'scope', type: 'text', default: '' })
  scope!: string;

  @Column({ name: 'due_at', type: 'timestamptz' })
  dueAt!: Date;

  @Column({ name: 'payload', type: 'jsonb' })
  payload!: object;

  /** W3C traceparent of the input that set the timer: its firing continues that trace. */
  @Column({ name: 'traceparent', type: 'text', nullable: true })
  traceparent!: string | null;

  /** Failed firings. */
  @Column({ name: 'attempts', type: 'integer', default: 0 })
  attempts!: number;
}
