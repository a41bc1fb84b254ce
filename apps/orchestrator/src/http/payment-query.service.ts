import { Injectable } from '@nestjs/common';
import type { MerchantRef, PaymentEvent } from '@payments/contracts';
import type { PaymentState, PaymentStatus } from '../domain';
import { Database } from '../persistence/database';

/** GET /payments/:id. Money in integer minor units with its currency. */
export interface PaymentView {
  readonly paymentId: string;
  readonly kind: 'sale' | 'preauth' | null;
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

interface Row {
  id: string;
  state: PaymentState;
  version: number;
  client_order_id: string;
  created_at: Date;
  updated_at: Date;
}

/** Reads a payment and its history (no locks, no writes). */
@Injectable()
export class PaymentQueryService {
  constructor(private readonly db: Database) {}

  async find(id: string): Promise<PaymentView | undefined> {
    return this.db.read(async (sql) => {
      const [row] = await sql.rows<Row>(
        `SELECT id, state, version, client_order_id, created_at, updated_at
           FROM payments WHERE id = $1`,
        [id],
      );
      if (!row) return undefined;
      const history = (
        await sql.rows<{ event: PaymentEvent }>(
          `SELECT event FROM payment_history WHERE payment_id = $1 ORDER BY version`,
          [id],
        )
      ).map((r) => r.event);
      return toView(row, history);
    });
  }
}

function toView(row: Row, history: PaymentEvent[]): PaymentView {
  const state = { ...row.state, version: row.version };
  const first = history.find(
    (e) =>
      e.type === 'operation-requested' && (e.operation === 'sale' || e.operation === 'preauth'),
  );
  return {
    paymentId: row.id,
    kind: state.kind ?? null,
    status: state.status,
    version: row.version,
    merchant: state.merchant ?? null,
    clientOrderId: row.client_order_id,
    amounts: {
      currency: state.currency ?? null,
      requested: first?.type === 'operation-requested' ? first.amount.minor : null,
      authorized: state.authorized,
      captured: state.captured,
      returned: state.returned,
    },
    state,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    history,
  };
}
