import { containsCardNumber, normalizeFieldName } from '@payments/core';

/**
 * Finds clear card data anywhere in an untrusted message: by field name (card number, CVV, expiry
 * in the spellings producers and the gateway use) and by value (a card number as `@payments/core`
 * detects it: Luhn-valid 12-19 digits, contiguous or grouped, UUIDs left intact). Returns the JSON
 * paths of the findings, never the values.
 */
const CARD_FIELD_NAMES = new Set([
  'pan',
  'card',
  'cardno',
  'cardnumber',
  'creditcardnumber',
  'creditcard',
  'ccnumber',
  'number',
  'cvv',
  'cvv2',
  'cvc',
  'cvc2',
  'securitycode',
  'cardsecuritycode',
  'expiry',
  'expirydate',
  'expirationdate',
  'expirymonth',
  'expiryyear',
  'expiremonth',
  'expireyear',
  'expmonth',
  'expyear',
  'cardexpmonth',
  'cardexpyear',
  'destinationcardno',
  'track1',
  'track2',
]);

/** Field names whose values are opaque and may contain anything (e.g. ciphertext). */
const OPAQUE_FIELDS = new Set(['sealedCard']);

export function findPlainCardData(input: unknown, path = '$', depth = 0): string[] {
  if (depth > 32) return [];
  if (typeof input === 'string') return containsCardNumber(input) ? [path] : [];
  if (typeof input === 'number') {
    return Number.isSafeInteger(input) && containsCardNumber(String(input)) ? [path] : [];
  }
  if (Array.isArray(input)) {
    return input.flatMap((item, i) => findPlainCardData(item, `${path}[${i}]`, depth + 1));
  }
  if (input !== null && typeof input === 'object') {
    const found: string[] = [];
    for (const [key, value] of Object.entries(input)) {
      if (OPAQUE_FIELDS.has(key)) continue;
      const here = `${path}.${key}`;
      if (
        CARD_FIELD_NAMES.has(normalizeFieldName(key)) &&
        value !== null &&
        value !== undefined &&
        value !== ''
      ) {
        found.push(here);
        continue;
      }
      found.push(...findPlainCardData(value, here, depth + 1));
    }
    return found;
  }
  return [];
}
