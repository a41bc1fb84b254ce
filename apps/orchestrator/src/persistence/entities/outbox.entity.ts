import { Column, Entity, Generated, Index, PrimaryGeneratedColumn } from 'typeorm';

/** `outbox` (migration OutboxInbox1767225600000): messages the relay publishes in `sequence` order. */
@Entity({ name: 'outbox' })
@Index('outbox_unpublished_idx', ['sequence'], { where: 'published_at IS NULL' })
@Index('outbox_unpublished_aggregate_idx', ['aggregateId', 'sequence'], {
  where: 'published_at IS NULL',
})
export class OutboxEntity {
  /** The CloudEvents ce_id (DEFAULT gen_random_uuid(); the saga always sets it). */
  @PrimaryGeneratedColumn('uuid', { name: 'id' })
  id!: string;

  @Column({ name: 'topic', type: 'text' })
  topic!: string;

  @Column({ name: 'message_key', type: 'text' })
  messageKey!: string;

  @Column({ name: 'headers', type: 'jsonb', default: {} })
  headers!: Record<string, string>;

  @Column({ name: 'payload', type: 'jsonb' })
  payload!: object;

  @Column({ name: 'aggregate_id', type: 'text' })
  aggregateId!: string;

  /** bigserial, taken at INSERT (not at commit); bigint comes back as a string. */
  @Column({ name: 'sequence', type: 'bigint' })
  @Generated('increment')
  sequence!: string;

  @Column({ name: 'attempts', type: 'integer', default: 0 })
  attempts!: number;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'published_at', type: 'timestamptz', nullable: true })
  publishedAt!: Date | null;
}
