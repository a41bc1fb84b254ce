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
/** 4-4-4-n digit groups standing alone: letters next to them mean an identifier, not a PAN. */
const GROUPED = /(?<![\dA-Za-z-])\d{4}([ -])\d{4}\1\d{4}\1\d{1,7}(?![\dA-Za-z-])/g;
/**
 * Identifiers such as payment and command ids: a UUID's digit-only segments
 * (`…f6481-2428-4766-9d…`) can read as a Luhn-valid grouped number, so UUIDs are blanked first.
 */
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

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
  const text = value.replace(UUID, ' ');
  for (const re of [DIGIT_RUN, GROUPED]) {
    for (const m of text.matchAll(re)) {
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
