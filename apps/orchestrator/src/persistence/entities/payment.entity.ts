import { Column, Entity, PrimaryColumn, Unique } from 'typeorm';
import type { PaymentState } from '../../domain';

/** `payments` (migration Payments1767312000000): the decider's state and its version. */
@Entity({ name: 'payments' })
@Unique('payments_endpoint_client_order_uq', ['endpointId', 'clientOrderId'])
export class PaymentEntity {
  @PrimaryColumn({ name: 'id', type: 'uuid' })
  id!: string;

  @Column({ name: 'endpoint_id', type: 'text' })
  endpointId!: string;

  @Column({ name: 'kind', type: 'text', nullable: true })
  kind!: string | null;

  @Column({ name: 'status', type: 'text' })
  status!: string;

  @Column({ name: 'state', type: 'jsonb' })
  state!: PaymentState;

  /** Set by the saga from the decider's state (not a TypeORM @VersionColumn: it moves per event). */
  @Column({ name: 'version', type: 'integer' })
  version!: number;

  @Column({ name: 'client_order_id', type: 'text' })
  clientOrderId!: string;

  @Column({ name: 'last_hint_at', type: 'timestamptz', nullable: true })
  lastHintAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;
}
