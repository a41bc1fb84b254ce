import { currencyExponent } from './format';

/** The flows the orchestrator runs (its flow names): the Flow filter offers exactly these. */
export const FLOWS = [
  'card-payment',
  'payout',
  'transfer',
  'recurring-schedule',
  'pan-eligibility',
  'payout-budget',
] as const;

/** The statuses a person looks for, by flow (any other is refused, not silently unmatched). */
export const STATUSES = [
  'requested',
  'processing',
  'action-required',
  'outcome-unknown',
  'approved',
  'authorized',
  'captured',
  'partially-returned',
  'returned',
  'voided',
  'verified',
  'declined',
  'failed',
  'registered',
  'paying',
  'paid',
  'rejected',
  'expired',
  'active',
  'past-due',
  'paused',
  'suspended',
  'cancelled',
  'completed',
  'registering',
  'registration-failed',
] as const;

/** Currencies offered by the Currency filter (ISO 4217). */
export const CURRENCIES = ['USD', 'EUR', 'GBP', 'CHF', 'JPY', 'KWD', 'PLN', 'RUB', 'UAH'] as const;

/** The filters only the console reads (paging history); never sent to the API. */
const CONSOLE_ONLY = new Set(['back']);

export type ApiQuery = { ok: true; query: URLSearchParams } | { ok: false; message: string };

/**
 * An amount typed in major units ("61.5", "61.50", "0.001" for KWD) as integer minor units, by the
 * currency's exponent: digits only, no float on the way (a text too precise is refused).
 */
export function parseMajor(text: string, exponent: number): number | undefined {
  const match = /^(\d{1,13})(?:\.(\d*))?$/.exec(text.trim());
  if (match === null) return undefined;
  const fraction = match[2] ?? '';
  if (fraction.length > exponent) return undefined;
  const minor = `${match[1]}${fraction.padEnd(exponent, '0')}`.replace(/^0+(?=\d)/, '');
  const value = Number(minor);
  return Number.isSafeInteger(value) ? value : undefined;
}

/**
 * The console's filters as the admin API's query: a select's value must be one it offers, an
 * amount (major units) needs a currency and becomes minor units. Refusals name the field.
 */
export function apiQuery(query: URLSearchParams): ApiQuery {
  const out = new URLSearchParams();
  for (const [key, value] of query) if (!CONSOLE_ONLY.has(key)) out.set(key, value);
  const flow = query.get('flow');
  if (flow !== null && !(FLOWS as readonly string[]).includes(flow)) {
    return {
      ok: false,
      message: `Flow “${flow}” is not one the orchestrator runs: choose one of the list.`,
    };
  }
  const status = query.get('status');
  if (status !== null && !(STATUSES as readonly string[]).includes(status)) {
    return {
      ok: false,
      message: `Status “${status}” is not a status any flow has: choose one of the list.`,
    };
  }
  const currency = query.get('currency');
  if (currency !== null && !(CURRENCIES as readonly string[]).includes(currency)) {
    return { ok: false, message: `Currency “${currency}” is not offered: choose one of the list.` };
  }
  for (const [field, label] of [
    ['minAmount', 'Min amount'],
    ['maxAmount', 'Max amount'],
  ] as const) {
    const typed = query.get(field);
    if (typed === null) continue;
    if (currency === null) {
      return { ok: false, message: `${label}: choose a currency to search by amount.` };
    }
    const exponent = currencyExponent(currency);
    const minor = parseMajor(typed, exponent);
    if (minor === undefined) {
      return {
        ok: false,
        message: `${label} “${typed}” is not an amount in ${currency} (digits, at most ${exponent} after the point).`,
      };
    }
    out.set(field, String(minor));
  }
  return { ok: true, query: out };
}
