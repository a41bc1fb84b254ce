import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** `dead_letter_replays` (migration DeadLetterReplays1769800000000): one row per replayed dead letter. */
@Entity({ name: 'dead_letter_replays' })
@Index('dead_letter_replays_at_idx', ['at'])
export class DeadLetterReplayEntity {
  @PrimaryColumn({ name: 'id', type: 'uuid' })
  id!: string;

  @Column({ name: 'at', type: 'timestamptz' })
  at!: Date;

  @Column({ name: 'actor', type: 'text' })
  actor!: string;

  @Column({ name: 'role', type: 'text' })
  role!: string;

  @Column({ name: 'reason', type: 'text' })
  reason!: string;

  /** `<dlq topic>/<partition>/<offset>`. */
  @Column({ name: 'dead_letter', type: 'text' })
  deadLetter!: string;

  @Column({ name: 'replayed_to', type: 'text' })
  replayedTo!: string;

  @Column({ name: 'record_key', type: 'text', nullable: true })
  recordKey!: string | null;
}
