/**
 * Outcomes like the public sandbox (facts §9): the CVV decides.
 *   123, 1234 approved · 321 3-D Secure challenge (3DS gates) · 111 approved frictionless (3DS
 *   gates) · 217 unknown · 101, 116, 119, 209 specific declines · anything else declined.
 * Where no payer is present to take a challenge (rebill, payouts, transfers with a CVV), 321 and
 * 111 approve without 3DS. Final statuses error and filtered are reachable through the test
 * controls (forced outcome), never by CVV, so the public table stays as published.
 */
export type FinalStatus = 'approved' | 'declined' | 'error' | 'filtered';
export type Status = FinalStatus | 'processing' | 'unknown';

export interface Result {
  readonly status: FinalStatus | 'unknown';
  readonly errorMessage?: string;
  readonly errorCode?: number;
  /** Whether 3-D Secure took place (`AUTHENTICATED`) for status replies. */
  readonly verified3d?: 'AUTHENTICATED' | 'NOT_AUTHENTICATED' | 'UNKNOWN';
}

export type CardDecision =
  { readonly kind: 'result'; readonly result: Result } | { readonly kind: 'challenge' };

export const APPROVED: Result = { status: 'approved' };

/** error-code values are the sandbox's own; the real table is not public (facts §8). */
const DECLINES: Readonly<Record<string, Result>> = {
  '101': { status: 'declined', errorMessage: 'Declined: expired card', errorCode: 101 },
  '116': { status: 'declined', errorMessage: 'Declined: insufficient funds', errorCode: 116 },
  '119': {
    status: 'declined',
    errorMessage: 'Declined: transaction not permitted to cardholder',
    errorCode: 119,
  },
  '209': {
    status: 'declined',
    errorMessage: 'Declined: pick-up card (stolen card)',
    errorCode: 209,
  },
};

const GENERIC_DECLINE: Result = {
  status: 'declined',
  errorMessage: 'Declined by the issuer',
  errorCode: 3,
};

export const THREEDS_FAILED: Result = {
  status: 'declined',
  errorMessage: '3-D Secure authentication failed',
  errorCode: 4,
  verified3d: 'NOT_AUTHENTICATED',
};

/** The payer never finished the 3-D Secure step: the ACS gives up and the issuer declines. */
export const THREEDS_TIMED_OUT: Result = {
  status: 'declined',
  errorMessage: '3-D Secure not completed in time',
  errorCode: 4,
  verified3d: 'UNKNOWN',
};

export function decideByCvv(
  cvv: string,
  context: { readonly threeDSGate: boolean; readonly payerPresent: boolean },
): CardDecision {
  const result = (r: Result): CardDecision => ({ kind: 'result', result: r });
  switch (cvv) {
    case '123':
    case '1234':
      return result(APPROVED);
    case '321':
      if (!context.payerPresent) return result(APPROVED);
      return context.threeDSGate ? { kind: 'challenge' } : result(GENERIC_DECLINE);
    case '111':
      if (!context.payerPresent) return result(APPROVED);
      return context.threeDSGate
        ? result({ status: 'approved', verified3d: 'UNKNOWN' })
        : result(GENERIC_DECLINE);
    case '217':
      return result({
        status: 'unknown',
        errorMessage: 'Acquirer network problem',
        errorCode: 217,
      });
    default:
      return result(DECLINES[cvv] ?? GENERIC_DECLINE);
  }
}

export function isFinal(status: Status): status is FinalStatus {
  switch (status) {
    case 'approved':
    case 'declined':
    case 'error':
    case 'filtered':
      return true;
    case 'processing':
    case 'unknown':
      return false;
  }
}

/** A forced outcome from the test controls. */
export function forcedResult(status: FinalStatus | 'unknown'): Result {
  switch (status) {
    case 'approved':
      return APPROVED;
    case 'declined':
      return GENERIC_DECLINE;
    case 'error':
      return { status: 'error', errorMessage: 'Processing error (forced)', errorCode: 24 };
    case 'filtered':
      return { status: 'filtered', errorMessage: 'Declined by fraud control', errorCode: 8 };
    case 'unknown':
      return { status: 'unknown', errorMessage: 'Acquirer network problem', errorCode: 217 };
  }
}
