import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  type OneStepPayoutCommand,
  type PayoutFormCommand,
  type PayoutV4Command,
  type ApprovePayoutCommand,
  type PanEligibilityCommand,
  type PayoutCheckCommand,
  type RejectPayoutCommand,
  type TransferByRefCommand,
  type TransferCommand,
  seal,
} from '@payments/contracts';
import { CARD_PUBLIC_KEY_FILE, SANDBOX_MERCHANT, TEST_CARD_NUMBER } from './sandbox-config';
import { sealedTestCard } from './payment-commands';

/**
 * Payout commands as a finance system sends them, for the e2e tests and the demo:
 * the destination card sealed to the gateway-adapter's test key with the payout id as associated
 * data. Sent with `PaymentStack.sendRaw` (the record key is the payout id).
 */
const CARD_PUBLIC_KEY = readFileSync(CARD_PUBLIC_KEY_FILE, 'utf8');

export interface PayoutOptions {
  readonly payoutId?: string;
  readonly amountMinor?: number;
  readonly currency?: string;
  readonly endpointId?: string;
}

function base(payoutId: string, endpointId: string) {
  return {
    commandId: randomUUID(),
    payoutId,
    merchant: { endpointId },
    occurredAt: new Date().toISOString(),
  };
}

/** A second Luhn-valid test card: the destination of transfers. */
export const DESTINATION_CARD_NUMBER = '4111111111111111';

/** A transfer's destination card, sealed with the transfer id. */
export function sealedDestinationCard(transferId: string): string {
  return seal(
    {
      number: DESTINATION_CARD_NUMBER,
      expiryMonth: 11,
      expiryYear: 2031,
      holderName: 'JOHN ROE',
    },
    CARD_PUBLIC_KEY,
    transferId,
  );
}

/** v4 transfer from the test card (CVV 123: approved) to the destination card. */
export function transfer(options: PayoutOptions & { readonly cvv?: string } = {}): TransferCommand {
  const transferId = options.payoutId ?? randomUUID();
  const { payoutId: _p, ...ids } = base(
    transferId,
    options.endpointId ?? SANDBOX_MERCHANT.plainEndpoint,
  );
  return {
    type: 'transfer',
    ...ids,
    transferId,
    amount: { minor: options.amountMinor ?? 1_000, currency: options.currency ?? 'USD' },
    sealedCard: sealedTestCard(transferId, options.cvv ?? '123'),
    sealedDestinationCard: sealedDestinationCard(transferId),
    order: { description: 'Card to card' },
  };
}

/** v4 transfer-by-ref to the destination card. */
export function transferByRef(options: PayoutOptions = {}): TransferByRefCommand {
  const { sealedCard: _source, ...rest } = transfer(options);
  return { ...rest, type: 'transfer-by-ref' };
}

/** The destination card (no CVV: the payee is not present), sealed for the payout. */
export function sealedPayoutCard(payoutId: string): string {
  return seal(
    { number: TEST_CARD_NUMBER, expiryMonth: 12, expiryYear: 2030, holderName: 'JANE DOE' },
    CARD_PUBLIC_KEY,
    payoutId,
  );
}

export function payoutCheck(options: PayoutOptions = {}): PayoutCheckCommand {
  const payoutId = options.payoutId ?? randomUUID();
  return {
    type: 'payout-check',
    ...base(payoutId, options.endpointId ?? SANDBOX_MERCHANT.plainEndpoint),
    amount: { minor: options.amountMinor ?? 5_000, currency: options.currency ?? 'USD' },
    sealedCard: sealedPayoutCard(payoutId),
    order: { description: 'Payout to a seller', purpose: 'marketplace settlement' },
  };
}

/** A one-step payout: v2 `payout` (OAuth HMAC-SHA1) or v4 `payout-v4` (OAuth RSA-SHA256). */
export function oneStepPayout(
  options: PayoutOptions & { readonly type?: 'payout' | 'payout-v4' } = {},
): OneStepPayoutCommand | PayoutV4Command {
  return { ...payoutCheck(options), type: options.type ?? 'payout' };
}

/** A payout through the gateway's hosted form: the payee enters the card there. */
export function payoutForm(
  options: PayoutOptions & { readonly redirectUrl: string },
): PayoutFormCommand {
  const payoutId = options.payoutId ?? randomUUID();
  return {
    type: 'payout-form',
    ...base(payoutId, options.endpointId ?? SANDBOX_MERCHANT.plainEndpoint),
    amount: { minor: options.amountMinor ?? 5_000, currency: options.currency ?? 'USD' },
    redirectUrl: options.redirectUrl,
    order: { description: 'Payout to a seller', purpose: 'marketplace settlement' },
  };
}

/** A PAN-eligibility check of the card behind a gateway card reference. */
export function panEligibility(
  cardRefId: string,
  endpointId: string = SANDBOX_MERCHANT.plainEndpoint,
): PanEligibilityCommand {
  const { payoutId: checkId, ...ids } = base(randomUUID(), endpointId);
  return { type: 'pan-eligibility', ...ids, checkId, cardRefId };
}

export function approvePayout(
  payoutId: string,
  endpointId: string = SANDBOX_MERCHANT.plainEndpoint,
  approvedBy = 'finance-bot',
): ApprovePayoutCommand {
  return { type: 'approve-payout', ...base(payoutId, endpointId), approvedBy, reason: 'checked' };
}

export function rejectPayout(
  payoutId: string,
  endpointId: string = SANDBOX_MERCHANT.plainEndpoint,
  rejectedBy = 'operator-7',
): RejectPayoutCommand {
  return {
    type: 'reject-payout',
    ...base(payoutId, endpointId),
    rejectedBy,
    reason: 'recipient under review',
  };
}
