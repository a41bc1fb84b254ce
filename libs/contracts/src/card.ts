import { luhnValid } from '@payments/core';
import { z } from 'zod';
import type { CardSummary } from './primitives';

/** Clear card data. Exists only inside the producer and the gateway-adapter; never in events. */
export const Card = z.strictObject({
  number: z
    .string()
    .regex(/^\d{12,19}$/, 'a card number of 12-19 digits')
    .refine(luhnValid, 'a card number that passes the Luhn check'),
  expiryMonth: z.number().int().min(1).max(12),
  expiryYear: z.number().int().min(2000).max(2099),
  cvv: z
    .string()
    .regex(/^\d{3,4}$/, 'a CVV of 3 or 4 digits')
    .optional(),
  holderName: z.string().trim().min(1).max(128),
});
export type Card = z.infer<typeof Card>;

const BRANDS: ReadonlyArray<readonly [brand: string, test: (n: string) => boolean]> = [
  ['AMEX', (n) => /^3[47]/.test(n)],
  ['DINERS', (n) => /^3(0[0-5]|[68])/.test(n)],
  ['JCB', (n) => inRange(n, 4, 3528, 3589)],
  ['MIR', (n) => inRange(n, 4, 2200, 2204)],
  ['MASTERCARD', (n) => inRange(n, 2, 51, 55) || inRange(n, 4, 2221, 2720)],
  ['VISA', (n) => n.startsWith('4')],
  ['DISCOVER', (n) => /^(6011|65|64[4-9])/.test(n)],
  ['UNIONPAY', (n) => n.startsWith('62')],
  ['MAESTRO', (n) => /^(5[06-9]|6)/.test(n)],
];

function inRange(n: string, prefixLength: number, low: number, high: number): boolean {
  const prefix = Number(n.slice(0, prefixLength));
  return prefix >= low && prefix <= high;
}

/** Card brand from the number's prefix, upper case like the gateway's `card-type`. */
export function cardBrand(number: string): string {
  return BRANDS.find(([, test]) => test(number))?.[0] ?? 'UNKNOWN';
}

/** What events may say about a card: BIN (first six), last four, brand. */
export function cardSummary(card: Pick<Card, 'number'>): Required<CardSummary> {
  const n = card.number;
  return { bin: n.slice(0, 6), lastFour: n.slice(-4), brand: cardBrand(n) };
}
