/**
 * Presentation only: money written from integer minor units by the currency's own exponent
 * (string arithmetic, never a float), times as ISO text.
 */
/** The currency's ISO 4217 exponent (digits after the point): 2 for a code Intl does not know. */
export function currencyExponent(currency: string): number {
  try {
    return (
      new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions()
        .maximumFractionDigits ?? 2
    );
  } catch {
    // An unknown code: two decimals, as most currencies have.
    return 2;
  }
}

export function formatMoney(minor: number, currency: string): string {
  const negative = minor < 0;
  return `${negative ? '-' : ''}${formatMinorDigits(String(Math.abs(Math.trunc(minor))), currency)}`;
}

/**
 * A sum of minor units given as decimal digits (a day's total may pass 2^53: never a number) in
 * major units by the currency's exponent (text that is not digits is shown as it came).
 */
export function formatMinorDigits(digits: string, currency: string): string {
  if (!/^\d+$/.test(digits)) return `${digits} (minor units) ${currency}`;
  const exponent = currencyExponent(currency);
  const text = digits.replace(/^0+(?=\d)/, '').padStart(exponent + 1, '0');
  const whole = text.slice(0, text.length - exponent);
  const fraction = exponent === 0 ? '' : `.${text.slice(text.length - exponent)}`;
  return `${whole}${fraction} ${currency}`;
}

// Names that never belong on a page, whatever an event carries (card data beyond BIN, last four
// and brand; secrets).
const HIDDEN_KEY = /sealed|cvv|cardnumber|^number$|pan$|signature|controlkey|password|secret/i;

/** A card reference reduced to what an operator may see. */
function cardView(card: Record<string, unknown>): string {
  const text = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : '');
  return [
    text(card.brand),
    card.bin === undefined ? '' : `BIN ${text(card.bin)}`,
    card.lastFour === undefined ? '' : `…${text(card.lastFour)}`,
  ]
    .filter((p) => p !== '')
    .join(' ');
}

/** One event's fields as short label/value pairs for the timeline. */
export function eventFields(event: unknown): Array<[string, string]> {
  if (typeof event !== 'object' || event === null) return [];
  const fields: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(event as Record<string, unknown>)) {
    if (key === 'type' || HIDDEN_KEY.test(key) || value === undefined || value === null) continue;
    if (key === 'card' && typeof value === 'object') {
      fields.push([key, cardView(value as Record<string, unknown>)]);
    } else if (
      typeof value === 'object' &&
      typeof (value as { minor?: unknown }).minor === 'number' &&
      typeof (value as { currency?: unknown }).currency === 'string'
    ) {
      const amount = value as { minor: number; currency: string };
      fields.push([key, formatMoney(amount.minor, amount.currency)]);
    } else if (
      typeof value === 'string' ||
      typeof value === 'number' ||
      typeof value === 'boolean'
    ) {
      fields.push([key, String(value)]);
    }
  }
  return fields;
}
