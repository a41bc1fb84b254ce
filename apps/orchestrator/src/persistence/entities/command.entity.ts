import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `commands` (migration Payments1767312000000): command id → fingerprint, for idempotency. */
@Entity({ name: 'commands' })
export class CommandEntity {
  @PrimaryColumn({ name: 'command_id', type: 'uuid' })
  commandId!: string;

  @Column({ name: 'fingerprint', type: 'text' })
  fingerprint!: string;

  @Column({ name: 'saga_id', type: 'uuid' })
  sagaId!: string;

  /** The rejection of a command about a saga that does not exist (no history to keep it in). */
  @Column({ name: 'rejection', type: 'jsonb', nullable: true })
  rejection!: { eventId: string; event: object } | null;

  @Column({ name: 'recorded_at', type: 'timestamptz', default: () => 'now()' })
  recordedAt!: Date;
}
