import type { PaymentEvent } from '@payments/contracts';
import { Column, Entity, ForeignKey, Index, PrimaryColumn, Unique } from 'typeorm';
import { PaymentEntity } from './payment.entity';

/** `payment_history` (migration Payments1767312000000): append-only, one row per event. */
@Entity({ name: 'payment_history' })
@Unique('payment_history_event_id_key', ['eventId'])
@Index('payment_history_command_idx', ['commandId'])
export class PaymentHistoryEntity {
  @PrimaryColumn({ name: 'payment_id', type: 'uuid' })
  @ForeignKey(() => PaymentEntity, { name: 'payment_history_payment_id_fkey' })
  paymentId!: string;

  @PrimaryColumn({ name: 'version', type: 'integer' })
  version!: number;

  @Column({ name: 'event_id', type: 'uuid' })
  eventId!: string;

  @Column({ name: 'event_type', type: 'text' })
  eventType!: string;

  @Column({ name: 'event', type: 'jsonb' })
  event!: PaymentEvent;

  @Column({ name: 'command_id', type: 'uuid' })
  commandId!: string;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt!: Date;
}
