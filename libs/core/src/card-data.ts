import {
  isCardNumber,
  isCardSecurityCodeField,
  maskCardNumber,
  maskCardNumbers,
} from './card-number';

/**
 * Card data masked in a whole message, for records kept at rest (dead letters): card numbers
 * masked to BIN + `******` + last four wherever they stand, the values of CVV-like fields
 * (`cvv`, `cvv2`, `securityCode` … in any spelling) blanked to `""`. Everything else is kept, so
 * an operator can still read (and, once fixed, re-drive) the message.
 */

const MAX_DEPTH = 64;

class TooDeep extends Error {}

function maskJson(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) throw new TooDeep();
  if (typeof value === 'string') return maskCardNumbers(value);
  if (typeof value === 'number') {
    const digits = String(value);
    return Number.isSafeInteger(value) && isCardNumber(digits) ? maskCardNumber(digits) : value;
  }
  if (Array.isArray(value)) return value.map((item) => maskJson(item, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      out[key] = isCardSecurityCodeField(key) ? '' : maskJson(inner, depth + 1);
    }
    return out;
  }
  return value;
}

/** `key=value`, `"key": "value"`, `key: value`: a field in form, JSON or log syntax. */
const FIELD = /(["']?)([A-Za-z][A-Za-z0-9_-]*)\1(\s*[:=]\s*)(["']?)([^"'&,;\s}\]]*)/g;

/**
 * Text that is not (complete) JSON: broken JSON, form encoding, free text. CVV-like fields written
 * as `name=value` or `"name": value` lose their value; card numbers are masked.
 */
export function maskCardDataInText(text: string): string {
  const blanked = text.replace(
    FIELD,
    (field: string, quote: string, name: string, separator: string, valueQuote: string) =>
      isCardSecurityCodeField(name) ? `${quote}${name}${quote}${separator}${valueQuote}` : field,
  );
  return maskCardNumbers(blanked);
}

/**
 * A JSON document (as parsed) with card data masked; a new value, the input is not mutated.
 * Nesting deeper than 64 levels is rendered as text and masked as such.
 */
export function maskCardDataInJson(value: unknown): unknown {
  try {
    return maskJson(value, 0);
  } catch (error) {
    if (!(error instanceof TooDeep)) throw error;
    return maskCardDataInText(JSON.stringify(value));
  }
}
