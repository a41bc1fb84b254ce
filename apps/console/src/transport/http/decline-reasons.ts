/**
 * The gateway's `error-code` in plain words, shown beside the code (the code stays: it is what the
 * gateway said). The one table of them: the gateway publishes no error-code table
 * (shared/reference/payment-api-facts.md §8, "still unknown" §11), so each row says where its
 * meaning comes from — the public sandbox's CVV-driven declines (facts §9: 101, 116, 119, 209, 217),
 * the values observed in published clients and emulators (facts §8: 1, 2, 3, 5, 24), and this
 * project's sandbox (apps/gateway-sandbox outcomes: 4, 8). A code not in the table is said to be
 * unknown here, never guessed.
 */
export interface DeclineReason {
  /** What happened, as a support agent says it to a customer. */
  readonly reason: string;
  /** What the person can do next. */
  readonly next: string;
  readonly source: 'public sandbox' | 'observed in published clients' | 'this project’s sandbox';
}

export const DECLINE_REASONS: Readonly<Record<string, DeclineReason>> = {
  '1': {
    reason: 'the gateway refused the request as invalid',
    next: 'nothing was charged; the request needs fixing, not the card',
    source: 'observed in published clients',
  },
  '2': {
    reason: 'the card was rejected by the processor',
    next: 'the payer can try another card',
    source: 'observed in published clients',
  },
  '3': {
    reason: 'the card issuer declined without giving a reason',
    next: 'the payer can ask their bank or try another card',
    source: 'observed in published clients',
  },
  '4': {
    reason: '3-D Secure authentication failed or was not completed',
    next: 'the payer can try again and complete the bank’s check',
    source: 'this project’s sandbox',
  },
  '5': {
    reason: 'the gateway answered with an error',
    next: 'nothing was charged; try again later or ask the gateway’s support',
    source: 'observed in published clients',
  },
  '8': {
    reason: 'declined by fraud control',
    next: 'do not retry with the same card; the merchant’s risk team decides',
    source: 'this project’s sandbox',
  },
  '24': {
    reason: 'the gateway could not process the payment (processing error)',
    next: 'nothing was charged; try again later',
    source: 'observed in published clients',
  },
  '101': {
    reason: 'the card has expired',
    next: 'the payer needs a card that is still valid',
    source: 'public sandbox',
  },
  '116': {
    reason: 'not enough money on the card’s account (insufficient funds)',
    next: 'the payer can top up or use another card',
    source: 'public sandbox',
  },
  '119': {
    reason: 'the card may not be used for this kind of payment (not permitted to cardholder)',
    next: 'the payer can ask their bank or use another card',
    source: 'public sandbox',
  },
  '209': {
    reason: 'the card is reported lost or stolen (pick-up card)',
    next: 'do not retry; the card must not be used',
    source: 'public sandbox',
  },
  '217': {
    reason: 'a network problem at the acquirer: the outcome is not known yet',
    next: 'do not charge again; the gateway is asked until it knows',
    source: 'public sandbox',
  },
};

/** The plain words for a gateway code, or a sentence saying none is known for it. */
export function declineReason(code: string): string {
  const known = DECLINE_REASONS[code.trim()];
  return known === undefined
    ? 'no plain-language meaning is known for this code (the gateway publishes no table)'
    : `${known.reason}: ${known.next}`;
}
