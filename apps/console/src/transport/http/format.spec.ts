import { eventFields, formatMoney } from './format';

describe('formatMoney', () => {
  it('writes minor units by the currency exponent, without floats', () => {
    expect(formatMoney(20_001, 'USD')).toBe('200.01 USD');
    expect(formatMoney(5, 'EUR')).toBe('0.05 EUR');
    expect(formatMoney(1_500, 'JPY')).toBe('1500 JPY');
    expect(formatMoney(1_234, 'KWD')).toBe('1.234 KWD');
    expect(formatMoney(-250, 'USD')).toBe('-2.50 USD');
    expect(formatMoney(9_007_199_254_740_991, 'USD')).toBe('90071992547409.91 USD');
  });
});

describe('eventFields', () => {
  it('shows a card as brand, BIN and last four only, amounts as money, and never sealed or secret fields', () => {
    const fields = eventFields({
      type: 'approved',
      amount: { minor: 1_000, currency: 'USD' },
      card: { brand: 'VISA', bin: '444444', lastFour: '4448', number: '4444444444444448' },
      sealedCard: 'abc',
      cvv: '123',
      controlKey: 'k',
      signature: 's',
      gatewayOrderId: '9001',
    });
    expect(fields).toEqual([
      ['amount', '10.00 USD'],
      ['card', 'VISA BIN 444444 …4448'],
      ['gatewayOrderId', '9001'],
    ]);
    expect(JSON.stringify(fields)).not.toContain('4444444444444448');
  });
});
