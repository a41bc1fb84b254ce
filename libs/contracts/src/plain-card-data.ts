import { containsCardNumber, maskCardNumbers, normalizeFieldName } from '@payments/core';

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

/**
 * Walks the whole value with an explicit stack (no depth limit, no recursion: a value nested
 * 100,000 deep is walked, not skipped). Field names are checked like values — a card number can
 * be a key — and paths name such a key masked (`maskCardNumbers`), so a path is safe to report.
 */
export function findPlainCardData(input: unknown, path = '$'): string[] {
  const found: string[] = [];
  const stack: Array<{ value: unknown; path: string }> = [{ value: input, path }];
  for (let next = stack.pop(); next !== undefined; next = stack.pop()) {
    const { value, path: here } = next;
    if (typeof value === 'string') {
      if (containsCardNumber(value)) found.push(here);
    } else if (typeof value === 'number') {
      if (Number.isSafeInteger(value) && containsCardNumber(String(value))) found.push(here);
    } else if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--)
        stack.push({ value: value[i] as unknown, path: `${here}[${i}]` });
    } else if (value !== null && typeof value === 'object') {
      const entries = Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i] as [string, unknown];
        if (OPAQUE_FIELDS.has(key)) continue;
        const keyPath = `${here}.${maskCardNumbers(key)}`;
        if (containsCardNumber(key)) {
          found.push(keyPath);
        } else if (
          CARD_FIELD_NAMES.has(normalizeFieldName(key)) &&
          child !== null &&
          child !== undefined &&
          child !== ''
        ) {
          found.push(keyPath);
        } else {
          stack.push({ value: child, path: keyPath });
        }
      }
    }
  }
  return found;
}
