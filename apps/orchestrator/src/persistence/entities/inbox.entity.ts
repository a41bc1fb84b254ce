import { Column, Entity, PrimaryColumn } from 'typeorm';

/** `inbox` (migration OutboxInbox1767225600000): one row per (consumer, message id) processed. */
@Entity({ name: 'inbox' })
export class InboxEntity {
  @PrimaryColumn({ name: 'consumer', type: 'text' })
  consumer!: string;

  @PrimaryColumn({ name: 'message_id', type: 'text' })
  messageId!: string;

  @Column({ name: 'processed_at', type: 'timestamptz', default: () => 'now()' })
  processedAt!: Date;
}
