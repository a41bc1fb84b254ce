import type { GatewayRequest } from '@payments/contracts';
import { Column, Entity, ForeignKey, Index, PrimaryColumn } from 'typeorm';
import { PaymentEntity } from './payment.entity';

/** `gateway_requests` (migration Payments1767312000000): every request as first sent. */
@Entity({ name: 'gateway_requests' })
@Index('gateway_requests_payment_idx', ['paymentId'])
export class GatewayRequestEntity {
  @PrimaryColumn({ name: 'request_id', type: 'uuid' })
  requestId!: string;

  @Column({ name: 'payment_id', type: 'uuid' })
  @ForeignKey(() => PaymentEntity, { name: 'gateway_requests_payment_id_fkey' })
  paymentId!: string;

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
