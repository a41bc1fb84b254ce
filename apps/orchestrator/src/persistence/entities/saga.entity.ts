import { Column, Entity, Index, PrimaryColumn, Unique } from 'typeorm';

/**
 * `sagas` (migrations Payments1767312000000, Sagas1767600000000): one row per saga of any flow,
 * the decider's state (jsonb) and its version. `status`, `kind`, `endpoint_id` and
 * `client_order_id` are projections of the state for queries and uniqueness.
 */
@Entity({ name: 'sagas' })
@Unique('sagas_endpoint_client_order_uq', ['endpointId', 'clientOrderId'])
@Index('sagas_flow_status_idx', ['flow', 'status'])
// Built CONCURRENTLY by migrations SagaTimeIndexes1769700000000 and SagaOrderIndex1769720000000.
@Index('sagas_updated_at_idx', ['updatedAt'])
@Index('sagas_created_at_id_idx', ['createdAt', 'id'])
@Index('sagas_client_order_id_idx', ['clientOrderId'])
export class SagaEntity {
  @PrimaryColumn({ name: 'id', type: 'uuid' })
  id!: string;

  @Column({ name: 'flow', type: 'text' })
  flow!: string;

  @Column({ name: 'endpoint_id', type: 'text' })
  endpointId!: string;

  @Column({ name: 'kind', type: 'text', nullable: true })
  kind!: string | null;

  @Column({ name: 'status', type: 'text' })
  status!: string;

  @Column({ name: 'state', type: 'jsonb' })
  state!: unknown;

  /** Set by the runtime from the decider's state (not a TypeORM @VersionColumn: it moves per event). */
  @Column({ name: 'version', type: 'integer' })
  version!: number;

  @Column({ name: 'client_order_id', type: 'text', nullable: true })
  clientOrderId!: string | null;

  @Column({ name: 'last_hint_at', type: 'timestamptz', nullable: true })
  lastHintAt!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'updated_at', type: 'timestamptz', default: () => 'now()' })
  updatedAt!: Date;
}
