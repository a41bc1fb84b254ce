import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface SentRequestRecord {
  readonly requestId: string;
  readonly attempt: number;
  readonly operation: string;
  readonly paymentId: string;
  readonly endpointId: string;
  readonly clientOrderId: string;
}

/**
 * "At most one send per intended operation" (DESIGN.md guarantee 2) across crashes and
 * redelivery. `claim` inserts the attempt's row in its own (auto-committed) statement before the
 * gateway call; it refuses when this attempt — or any other attempt of the same request — is
 * already recorded, because that one may have reached the gateway. `release` deletes the row
 * after a provably not-sent outcome so that a resend is allowed.
 */
@Injectable()
export class SentRequestsLedger {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * True when the row was written (the call may proceed); false when it may already be sent.
   * Atomic across replicas: a concurrent claim of another attempt that the NOT EXISTS check cannot
   * see yet waits on the one-attempt-per-request unique index and then conflicts (no row, false).
   * `afterNoTrace`: the orchestrator's one resend of a request the gateway showed no trace of
   * (operation-resent), or its re-ask of a request a repeat of which changes nothing (a lost
   * create-card-ref or get-card-info reply) — only this very attempt must not be in the ledger
   * yet, so a redelivery of the resend is still refused.
   */
  async claim(
    record: SentRequestRecord,
    options: { afterNoTrace?: boolean } = {},
  ): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query(
      `INSERT INTO adapter_sent_requests
         (request_id, attempt, operation, payment_id, endpoint_id, client_order_id, deliberate)
       SELECT $1, $2, $3, $4, $5, $6, $7
       WHERE $7::boolean OR NOT EXISTS (SELECT 1 FROM adapter_sent_requests WHERE request_id = $1)
       ON CONFLICT DO NOTHING
       RETURNING request_id`,
      [
        record.requestId,
        record.attempt,
        record.operation,
        record.paymentId,
        record.endpointId,
        record.clientOrderId,
        options.afterNoTrace === true,
      ],
    );
    return rows.length === 1;
  }

  async release(requestId: string, attempt: number): Promise<void> {
    await this.dataSource.query(
      `DELETE FROM adapter_sent_requests WHERE request_id = $1 AND attempt = $2`,
      [requestId, attempt],
    );
  }
}
