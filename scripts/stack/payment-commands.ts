import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  type AccountVerificationCommand,
  type AccountVerificationFormCommand,
  type CaptureCommand,
  type PaymentCommand,
  type ReturnCommand,
  type SaleCommand,
  type VoidCommand,
  seal,
} from '@payments/contracts';
import { CARD_PUBLIC_KEY_FILE, SANDBOX_MERCHANT, TEST_CARD_NUMBER } from './sandbox-config';

/**
 * Payment commands as a merchant's system sends them, for the e2e tests, the chaos run, the demo
 * and the bench (through `PaymentStack.sale`, `capture`, …): the test card sealed to the
 * gateway-adapter's test key with the payment id as associated data.
 */
const CARD_PUBLIC_KEY = readFileSync(CARD_PUBLIC_KEY_FILE, 'utf8');

export interface SaleOptions {
  readonly paymentId?: string;
  readonly amountMinor?: number;
  readonly currency?: string;
  readonly cvv?: string;
  readonly endpointId?: string;
  readonly description?: string;
}

/** The test card (CVV 123: approved), sealed with `boundTo` (the payment's or transfer's id). */
export function sealedTestCard(boundTo: string, cvv: string): string {
  return seal(
    { number: TEST_CARD_NUMBER, expiryMonth: 12, expiryYear: 2030, cvv, holderName: 'JANE DOE' },
    CARD_PUBLIC_KEY,
    boundTo,
  );
}

/** A sale with the sealed test card; the payer returns to `callbackIngestUrl`'s /return page. */
export function saleCommand(callbackIngestUrl: string, options: SaleOptions = {}): SaleCommand {
  const paymentId = options.paymentId ?? randomUUID();
  return {
    type: 'sale',
    commandId: randomUUID(),
    paymentId,
    merchant: { endpointId: options.endpointId ?? SANDBOX_MERCHANT.plainEndpoint },
    occurredAt: new Date().toISOString(),
    amount: { minor: options.amountMinor ?? 1_000, currency: options.currency ?? 'USD' },
    order: { description: options.description ?? 'Demo order' },
    customer: { email: 'jane.doe@example.com', ipAddress: '203.0.113.7', phone: '+4930123456' },
    billingAddress: { address1: '1 Main St', city: 'Berlin', zipCode: '10115', country: 'DE' },
    redirectUrl: `${callbackIngestUrl}/return/${options.endpointId ?? SANDBOX_MERCHANT.plainEndpoint}`,
    sealedCard: sealedTestCard(paymentId, options.cvv ?? '123'),
  };
}

/** A hosted form: the sale's fields without any card; the payer types it there. */
export function hostedFormOf(
  sale: SaleCommand,
  type: 'sale-form' | 'preauth-form' | 'payment-form',
): PaymentCommand {
  const { sealedCard: _card, browser: _browser, ...fields } = sale;
  return { ...fields, type };
}

/** Account verification (zero amount) with the sale's sealed card (cvv 123 passes). */
export function accountVerificationOf(sale: SaleCommand): AccountVerificationCommand {
  const { amount: _amount, type: _type, order, browser: _browser, ...fields } = sale;
  return { ...fields, type: 'account-verification', order: { description: order.description } };
}

/** Account verification on the gateway's hosted page. */
export function accountVerificationFormOf(
  verification: AccountVerificationCommand,
): AccountVerificationFormCommand {
  const { sealedCard: _card, ...fields } = verification;
  return { ...fields, type: 'account-verification-form', redirectUrl: fields.redirectUrl ?? '' };
}

/** A follow-up on a payment of the sandbox merchant, for `amountMinor` (none: the whole). */
function followUp(paymentId: string, amountMinor?: number, currency = 'USD') {
  return {
    commandId: randomUUID(),
    paymentId,
    merchant: { endpointId: SANDBOX_MERCHANT.plainEndpoint },
    occurredAt: new Date().toISOString(),
    ...(amountMinor === undefined ? {} : { amount: { minor: amountMinor, currency } }),
  };
}

export function captureCommand(
  paymentId: string,
  amountMinor?: number,
  currency = 'USD',
): CaptureCommand {
  return { ...followUp(paymentId, amountMinor, currency), type: 'capture' };
}

export function voidCommand(paymentId: string): VoidCommand {
  return { ...followUp(paymentId), type: 'void' };
}

export function returnCommand(
  paymentId: string,
  amountMinor?: number,
  currency = 'USD',
): ReturnCommand {
  return { ...followUp(paymentId, amountMinor, currency), type: 'return' };
}
