/** Card number checks. The sandbox never stores or logs a full card number. */

export function luhnValid(pan: string): boolean {
  if (!/^\d{12,19}$/.test(pan)) return false;
  let sum = 0;
  let double = false;
  for (let i = pan.length - 1; i >= 0; i -= 1) {
    let digit = pan.charCodeAt(i) - 48;
    if (double) {
      digit *= 2;
      if (digit > 9) digit -= 9;
    }
    sum += digit;
    double = !double;
  }
  return sum % 10 === 0;
}

/** Spaces and dashes are tolerated in a typed card number; nothing else. */
export function normalizePan(input: string): string {
  return input.replace(/[\s-]/g, '');
}

export function brandOf(pan: string): string {
  if (/^4/.test(pan)) return 'VISA';
  if (/^(5[1-5]|2[2-7])/.test(pan)) return 'MASTERCARD';
  if (/^3[47]/.test(pan)) return 'AMEX';
  if (/^(6011|65)/.test(pan)) return 'DISCOVER';
  if (/^35/.test(pan)) return 'JCB';
  if (/^220[0-4]/.test(pan)) return 'MIR';
  return 'UNKNOWN';
}

export function maskPan(pan: string): string {
  return `${pan.slice(0, 6)}${'*'.repeat(Math.max(0, pan.length - 10))}${pan.slice(-4)}`;
}
