import { Column, Entity, ForeignKey, Index, PrimaryColumn, Unique } from 'typeorm';
import type { SagaEvent } from '../../runtime/flow';
import { SagaEntity } from './saga.entity';

/** `saga_history` (migrations Payments1767312000000, Sagas1767600000000): append-only, one row per event. */
@Entity({ name: 'saga_history' })
@Unique('saga_history_event_id_key', ['eventId'])
@Index('saga_history_command_idx', ['commandId'])
export class SagaHistoryEntity {
  @PrimaryColumn({ name: 'saga_id', type: 'uuid' })
  @ForeignKey(() => SagaEntity, { name: 'saga_history_saga_id_fkey' })
  sagaId!: string;

  @PrimaryColumn({ name: 'version', type: 'integer' })
  version!: number;

  @Column({ name: 'event_id', type: 'uuid' })
  eventId!: string;

  @Column({ name: 'event_type', type: 'text' })
  eventType!: string;

  @Column({ name: 'event', type: 'jsonb' })
  event!: SagaEvent;

  @Column({ name: 'command_id', type: 'uuid' })
  commandId!: string;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt!: Date;
}
