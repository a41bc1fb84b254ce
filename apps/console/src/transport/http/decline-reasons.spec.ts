import { declineReason } from './decline-reasons';
import { formatMinorDigits } from './format';

describe('declineReason', () => {
  it('says a known gateway code in plain words, and an unknown one as unknown (never guessed)', () => {
    expect(declineReason('116')).toContain('insufficient funds');
    expect(declineReason('3')).toContain('issuer declined');
    expect(declineReason('999')).toContain('no plain-language meaning is known');
  });
});

describe('formatMinorDigits', () => {
  it('writes digit strings by the currency exponent', () => {
    expect(formatMinorDigits('5', 'USD')).toBe('0.05 USD');
    expect(formatMinorDigits('0001500', 'JPY')).toBe('1500 JPY');
    expect(formatMinorDigits('123456789012345678901', 'EUR')).toBe('1234567890123456789.01 EUR');
  });
});
