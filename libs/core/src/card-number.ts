/**
 * THE card-number detector and masker (PCI DSS: at most the BIN and the last four may be shown).
 * Logging, the command contract, the gateway client's redaction, the adapter and the dead-letter
 * topic all use this one; the gateway sandbox keeps its own Luhn as an independent oracle.
 *
 * A card number is a run of 12–19 digits that passes the Luhn check (and is not one digit
 * repeated, a placeholder such as 0000 0000 0000 0000), written
 *  - contiguously (`4111111111111111`), not touching other digits; or
 *  - in groups of 3–6 digits separated by one space or dash (`4111 1111 1111 1111`,
 *    `3782-822463-10005`), standing alone: no letter, digit or dash-joined word touches the run,
 *    so identifiers such as `ord-1234-5678-…` are not cards. Within a longer run of groups, the
 *    longest 3–5 groups that form a card are taken (`4111 1111 1111 1111 2030` → the first four).
 * UUIDs are left intact: their digit-only segments (`…f6481-2428-4766-9d…`,
 * `…-1234-1234-1234-123453ab…`) can read as a Luhn-valid number, and payment, command and
 * correlation ids must survive masking.
 */

export const CARD_NUMBER_MIN_DIGITS = 12;
export const CARD_NUMBER_MAX_DIGITS = 19;

/** Where a card number stands in a text (`end` exclusive) and its digits. */
export interface CardNumberMatch {
  readonly start: number;
  readonly end: number;
  readonly digits: string;
}

/** Luhn (mod 10) check; false for an empty string or anything but ASCII digits. */
export function luhnValid(digits: string): boolean {
  if (digits.length === 0) return false;
  let sum = 0;
  let double = false;
  for (let i = digits.length - 1; i >= 0; i--) {
    let d = digits.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    if (double) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
    double = !double;
  }
  return sum % 10 === 0;
}

const ONE_DIGIT_REPEATED = /^(\d)\1*$/;

/** Whether `digits` (digits only, no separators) is a card number by the rules above. */
export function isCardNumber(digits: string): boolean {
  return (
    digits.length >= CARD_NUMBER_MIN_DIGITS &&
    digits.length <= CARD_NUMBER_MAX_DIGITS &&
    !ONE_DIGIT_REPEATED.test(digits) &&
    luhnValid(digits)
  );
}

/** BIN (first six) + `******` + last four, whatever the length (the length is not revealed). */
export function maskCardNumber(digits: string): string {
  return `${digits.slice(0, 6)}******${digits.slice(-4)}`;
}

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;
const CONTIGUOUS = /(?<![0-9])[0-9]{12,19}(?![0-9])/g;
const GROUPED = /(?<![0-9A-Za-z-])[0-9]{3,6}(?:[ -][0-9]{3,6}){2,}(?![0-9A-Za-z]|-[0-9A-Za-z])/g;
const GROUP = /[0-9]+/g;
const MIN_GROUPS = 3;
const MAX_GROUPS = 5;

function groupedMatches(run: string, offset: number): CardNumberMatch[] {
  const groups = [...run.matchAll(GROUP)].map((g) => ({ start: g.index, digits: g[0] }));
  const found: CardNumberMatch[] = [];
  let start = 0;
  while (start <= groups.length - MIN_GROUPS) {
    let next = start + 1;
    for (let end = Math.min(groups.length, start + MAX_GROUPS); end - start >= MIN_GROUPS; end--) {
      const digits = groups
        .slice(start, end)
        .map((g) => g.digits)
        .join('');
      if (isCardNumber(digits)) {
        const last = groups[end - 1];
        found.push({
          start: offset + groups[start].start,
          end: offset + last.start + last.digits.length,
          digits,
        });
        next = end;
        break;
      }
    }
    start = next;
  }
  return found;
}

/** Every card number in `text`, in order of position. */
export function findCardNumbers(text: string): CardNumberMatch[] {
  if (!/[0-9]{3}/.test(text)) return [];
  // Blank UUIDs with as many spaces, so positions stay those of the original text.
  const scanned = text.replace(UUID, (id) => ' '.repeat(id.length));
  const found: CardNumberMatch[] = [];
  for (const m of scanned.matchAll(CONTIGUOUS)) {
    if (isCardNumber(m[0]))
      found.push({ start: m.index, end: m.index + m[0].length, digits: m[0] });
  }
  for (const m of scanned.matchAll(GROUPED)) found.push(...groupedMatches(m[0], m.index));
  return found.sort((a, b) => a.start - b.start);
}

export function containsCardNumber(text: string): boolean {
  return findCardNumbers(text).length > 0;
}

/** `text` with every card number replaced by its mask; UUIDs and everything else untouched. */
export function maskCardNumbers(text: string): string {
  const found = findCardNumbers(text);
  if (found.length === 0) return text;
  let out = '';
  let from = 0;
  for (const m of found) {
    out += text.slice(from, m.start) + maskCardNumber(m.digits);
    from = m.end;
  }
  return out + text.slice(from);
}

/**
 * Field names of card security codes (CVV2/CVC2/CID), compared lower-case with everything but
 * letters and digits removed: `cvv`, `CVV2`, `security_code`, `card-security-code` …
 */
const CARD_SECURITY_CODE_KEYS = new Set([
  'cvv',
  'cvv2',
  'cvc',
  'cvc2',
  'cid',
  'csc',
  'securitycode',
  'cardsecuritycode',
  'cardverificationvalue',
  'cardverificationcode',
]);

export function normalizeFieldName(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]/g, '');
}

export function isCardSecurityCodeField(name: string): boolean {
  return CARD_SECURITY_CODE_KEYS.has(normalizeFieldName(name));
}
