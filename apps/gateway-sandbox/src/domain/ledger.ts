/**
 * Every money movement the sandbox performed, per merchant and client_orderid, so tests can prove
 * that nothing was charged twice. Amounts are integer minor units.
 */
export type Movement =
  | 'authorized'
  | 'released'
  | 'captured'
  | 'charged'
  | 'refunded'
  | 'voided'
  | 'paid-out'
  | 'transferred';

export interface LedgerEntry {
  readonly seq: number;
  readonly at: number;
  readonly login: string;
  readonly clientOrderId: string;
  readonly orderId: string;
  readonly serial: string;
  readonly movement: Movement;
  readonly amountMinor: number;
  readonly currency: string;
}

export type LedgerTotals = Partial<Record<Movement, number>>;

export class Ledger {
  private entries: LedgerEntry[] = [];
  private seq = 0;

  record(entry: Omit<LedgerEntry, 'seq'>): LedgerEntry {
    this.seq += 1;
    const stored = { ...entry, seq: this.seq };
    this.entries.push(stored);
    return stored;
  }

  list(filter: { login?: string; clientOrderId?: string } = {}): LedgerEntry[] {
    return this.entries.filter(
      (e) =>
        (filter.login === undefined || e.login === filter.login) &&
        (filter.clientOrderId === undefined || e.clientOrderId === filter.clientOrderId),
    );
  }

  totals(filter: { login?: string; clientOrderId?: string } = {}): LedgerTotals {
    const totals: LedgerTotals = {};
    for (const e of this.list(filter))
      totals[e.movement] = (totals[e.movement] ?? 0) + e.amountMinor;
    return totals;
  }

  reset(): void {
    this.entries = [];
    this.seq = 0;
  }
}
