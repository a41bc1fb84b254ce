import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { PaymentEntity } from './payment.entity';

/** Timer kinds of the decider plus the app's own deferred resend of a not-sent request. */
export type StoredTimerKind = 'status-poll' | 'unknown-alert' | 'hold-expiry' | 'gateway-resend';

/** `timers` (migration Payments1767312000000): one row per (payment, kind). */
@Entity({ name: 'timers' })
@Index('timers_due_idx', ['dueAt'])
export class TimerEntity {
  @PrimaryColumn({ name: 'payment_id', type: 'uuid' })
  @ForeignKey(() => PaymentEntity, { name: 'timers_payment_id_fkey' })
  paymentId!: string;

  @PrimaryColumn({ name: 'kind', type: 'text' })
  kind!: StoredTimerKind;

  @Column({ name: 'due_at', type: 'timestamptz' })
  dueAt!: Date;

  @Column({ name: 'payload', type: 'jsonb' })
  payload!: object;

  /** Failed firings. */
  @Column({ name: 'attempts', type: 'integer', default: 0 })
  attempts!: number;
}
