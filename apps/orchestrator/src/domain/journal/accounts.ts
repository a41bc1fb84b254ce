/**
 * The journal's chart of accounts, named the Formance way (colon-separated segments, an external
 * `world` account that may go negative) with the currency kept beside the name as TigerBeetle
 * keeps a `ledger`: an account is (name, currency) and an entry balances per currency.
 *
 * Every merchant account is debit-normal and counts one kind of money, gross, for one merchant
 * endpoint: its balance (sum of its lines, debit positive) is that kind's total. `world` (payers,
 * payees, the gateway's side) is the counterpart of every movement, so it mirrors their sum.
 *
 *  - `merchant:<endpoint>:customer-funds:authorized`  held on payers' cards (preauths), not captured
 *                                                      and not released yet
 *  - `merchant:<endpoint>:captured-receivable`        charged (sales, rebills, captures) less voids
 *                                                      of charges: what the gateway owes the merchant
 *  - `merchant:<endpoint>:refunds-payable`            refunded to payers (returns of captured money)
 *  - `merchant:<endpoint>:payouts-sent`               paid out to payees
 *  - `merchant:<endpoint>:transfers-sent`             moved by transfers
 *  - `merchant:<endpoint>:in-flight-unknown`          asked of the gateway with no answer yet
 *                                                      (outcome unknown); emptied when it is answered
 *  - `merchant:<endpoint>:settled-by-decision`        an unknown outcome a person settled (a case)
 */
export const WORLD_ACCOUNT = 'world';

export const MERCHANT_ACCOUNT_KINDS = [
  'customer-funds:authorized',
  'captured-receivable',
  'refunds-payable',
  'payouts-sent',
  'transfers-sent',
  'in-flight-unknown',
  'settled-by-decision',
] as const;
export type MerchantAccountKind = (typeof MERCHANT_ACCOUNT_KINDS)[number];

/** A saga whose events named no merchant (a bug upstream): its lines are kept, not lost. */
export const UNATTRIBUTED_ENDPOINT = 'unattributed';

export function merchantAccount(endpointId: string, kind: MerchantAccountKind): string {
  return `merchant:${endpointId}:${kind}`;
}
