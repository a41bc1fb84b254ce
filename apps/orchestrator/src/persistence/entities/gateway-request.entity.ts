import type { GatewayRequest } from '@payments/contracts';
import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { SagaEntity } from './saga.entity';

/** `gateway_requests` (migration Payments1767312000000): every request as first sent. */
@Entity({ name: 'gateway_requests' })
@Index('gateway_requests_saga_idx', ['sagaId'])
export class GatewayRequestEntity {
  @PrimaryColumn({ name: 'request_id', type: 'uuid' })
  requestId!: string;

  @Column({ name: 'saga_id', type: 'uuid' })
  @ForeignKey(() => SagaEntity, { name: 'gateway_requests_saga_id_fkey' })
  sagaId!: string;

  @Column({ name: 'operation', type: 'text' })
  operation!: string;

  /** The request; `sealedCard` is removed once the payment is settled. */
  @Column({ name: 'body', type: 'jsonb' })
  body!: GatewayRequest;

  @Column({ name: 'created_at', type: 'timestamptz', default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'sealed_card_purged_at', type: 'timestamptz', nullable: true })
  sealedCardPurgedAt!: Date | null;
}
