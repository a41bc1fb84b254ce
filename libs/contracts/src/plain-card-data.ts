import { luhnValid } from './card';

/**
 * Finds clear card data anywhere in an untrusted message: by field name (card number, CVV, expiry
 * in the spellings producers and the gateway use) and by value (a 13-19 digit run that passes the
 * Luhn check). Returns the JSON paths of the findings, never the values.
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

const DIGIT_RUN = /(?<!\d)\d{13,19}(?!\d)/g;
const GROUPED = /(?<![\d-])\d{4}([ -])\d{4}\1\d{4}\1\d{1,7}(?![\d-])/g;

function normaliseName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

function looksLikePan(candidate: string): boolean {
  const digits = candidate.replace(/[ -]/g, '');
  return (
    digits.length >= 13 && digits.length <= 19 && !/^(\d)\1*$/.test(digits) && luhnValid(digits)
  );
}

function valueHasPan(value: string): boolean {
  for (const re of [DIGIT_RUN, GROUPED]) {
    for (const m of value.matchAll(re)) {
      if (looksLikePan(m[0])) return true;
    }
  }
  return false;
}

export function findPlainCardData(input: unknown, path = '$', depth = 0): string[] {
  if (depth > 32) return [];
  if (typeof input === 'string') return valueHasPan(input) ? [path] : [];
  if (typeof input === 'number') {
    return Number.isSafeInteger(input) && valueHasPan(String(input)) ? [path] : [];
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
        CARD_FIELD_NAMES.has(normaliseName(key)) &&
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
