import { Injectable } from '@nestjs/common';
import type { MerchantRef, PaymentEvent } from '@payments/contracts';
import { CARD_PAYMENT_FLOW } from '../../flows/card-payment/card-payment.flow';
import type { PaymentState, PaymentStatus } from '../../flows/card-payment/domain';
import { Database } from '../../persistence/database';
import { SagaEntity, SagaHistoryEntity } from '../../persistence/entities';

/** GET /payments/:id. Money in integer minor units with its currency. */
export interface PaymentView {
  readonly paymentId: string;
  readonly kind: 'sale' | 'preauth' | 'rebill' | 'account-verification' | null;
  readonly status: PaymentStatus;
  readonly version: number;
  readonly merchant: MerchantRef | null;
  readonly clientOrderId: string;
  readonly amounts: {
    readonly currency: string | null;
    /** The amount of the sale/preauth as requested. */
    readonly requested: number | null;
    readonly authorized: number;
    readonly captured: number;
    readonly returned: number;
  };
  readonly state: PaymentState;
  readonly createdAt: string;
  readonly updatedAt: string;
  /** Every event of the payment, in version order. */
  readonly history: PaymentEvent[];
}

/** Reads a payment and its history (no locks, no writes). */
@Injectable()
export class PaymentQueryService {
  constructor(private readonly db: Database) {}

  async find(id: string): Promise<PaymentView | undefined> {
    // One snapshot: the status and the history agree.
    return this.db.snapshot(async (db) => {
      const row = await db.findOneBy(SagaEntity, { id, flow: CARD_PAYMENT_FLOW });
      if (!row) return undefined;
      const history = await db.find(SagaHistoryEntity, {
        select: { sagaId: true, version: true, event: true },
        where: { sagaId: id },
        order: { version: 'ASC' },
      });
      return toView(
        row,
        history.map((h) => h.event as PaymentEvent),
      );
    });
  }
}

function toView(row: SagaEntity, history: PaymentEvent[]): PaymentView {
  const state = { ...(row.state as PaymentState), version: row.version };
  const first = history.find(
    (e) =>
      e.type === 'operation-requested' &&
      (e.operation === 'sale' || e.operation === 'preauth' || e.operation === 'rebill'),
  );
  return {
    paymentId: row.id,
    kind: state.status === 'initial' ? null : state.kind,
    status: state.status,
    version: row.version,
    merchant: state.status === 'initial' ? null : state.merchant,
    clientOrderId: row.clientOrderId ?? row.id,
    amounts: {
      currency: state.status === 'initial' ? null : state.currency,
      requested: first?.type === 'operation-requested' ? first.amount.minor : null,
      authorized: state.authorized,
      captured: state.captured,
      returned: state.returned,
    },
    state,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
    history,
  };
}
