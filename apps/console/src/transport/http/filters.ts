import { type AdminScope, FLOW_FAMILIES } from '@payments/contracts';
import { currencyExponent } from './format';

/**
 * The flows the orchestrator runs (its flow names): the Flow filter offers exactly these, read
 * from the contracts' registry of flow families (a new flow is offered without a line here).
 */
export const FLOWS: readonly string[] = FLOW_FAMILIES.map((family): string => family.name);

/**
 * The statuses a saga of each flow can have (its state's `status`, the row's), by flow name.
 * `scripts/console-filters.spec.ts` holds each list to its flow's status type in the orchestrator
 * (the compiler refuses a status left out there) and fails on a flow of `FLOW_FAMILIES` without
 * its list here: the Status select cannot forget a flow or a status.
 */
export const STATUSES_BY_FLOW: Readonly<Record<string, readonly string[]>> = {
  'card-payment': [
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
  ],
  payout: [
    'checking',
    'registered',
    'reserving',
    'paying',
    'paid',
    'declined',
    'failed',
    'rejected',
    'expired',
    'refused',
  ],
  'payout-budget': ['open'],
  transfer: ['transferring', 'transferred', 'declined', 'failed', 'refused'],
  'pan-eligibility': ['checking', 'eligible', 'not-eligible', 'failed'],
  'recurring-schedule': [
    'registering',
    'registered',
    'registration-failed',
    'active',
    'past-due',
    'paused',
    'suspended',
    'cancelled',
    'completed',
  ],
};

/** Every status of any flow, once, in the flows' order: the Status select without a flow. */
export const STATUSES: readonly string[] = [
  ...new Set(FLOWS.flatMap((flow) => STATUSES_BY_FLOW[flow] ?? [])),
];

/** Currencies offered by the Currency filter (ISO 4217). */
export const CURRENCIES = ['USD', 'EUR', 'GBP', 'CHF', 'JPY', 'KWD', 'PLN', 'RUB', 'UAH'] as const;

/**
 * The endpoints the Endpoint select offers: a merchant-scoped token's own, else the console's
 * `CONSOLE_ENDPOINTS`; undefined (the field is typed; the API validates it) when neither names any.
 */
export function endpointChoices(
  scope: AdminScope | undefined,
  configured: readonly string[],
): readonly string[] | undefined {
  if (scope !== undefined && scope !== 'all') return scope.endpoints;
  return configured.length > 0 ? configured : undefined;
}

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
export function apiQuery(query: URLSearchParams, endpoints?: readonly string[]): ApiQuery {
  const out = new URLSearchParams();
  for (const [key, value] of query) if (!CONSOLE_ONLY.has(key)) out.set(key, value);
  const flow = query.get('flow');
  if (flow !== null && !FLOWS.includes(flow)) {
    return {
      ok: false,
      message: `Flow “${flow}” is not one the orchestrator runs: choose one of the list.`,
    };
  }
  const status = query.get('status');
  if (status !== null && !STATUSES.includes(status)) {
    return {
      ok: false,
      message: `Status “${status}” is not a status any flow has: choose one of the list.`,
    };
  }
  if (flow !== null && status !== null && !(STATUSES_BY_FLOW[flow] ?? []).includes(status)) {
    return {
      ok: false,
      message: `Status “${status}” is not one a ${flow} saga has: choose one of ${(STATUSES_BY_FLOW[flow] ?? []).join(', ')}.`,
    };
  }
  const endpoint = query.get('endpoint');
  if (endpoint !== null && endpoints !== undefined && !endpoints.includes(endpoint)) {
    return {
      ok: false,
      message: `Endpoint “${endpoint}” is not one you can see: choose one of ${endpoints.join(', ')}.`,
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
