import { apiQuery, endpointChoices, parseMajor } from './filters';

describe('parseMajor', () => {
  it('reads major units exactly by the exponent, never through a float', () => {
    expect(parseMajor('61.5', 2)).toBe(6150);
    expect(parseMajor('61.50', 2)).toBe(6150);
    expect(parseMajor('0.29', 2)).toBe(29);
    expect(parseMajor('1.005', 3)).toBe(1005);
    expect(parseMajor('500', 0)).toBe(500);
    expect(parseMajor('1.001', 2)).toBeUndefined();
    expect(parseMajor('1,00', 2)).toBeUndefined();
    expect(parseMajor('-1', 2)).toBeUndefined();
    expect(parseMajor('1e3', 2)).toBeUndefined();
  });
});

describe('apiQuery', () => {
  const q = (init: Record<string, string>) => apiQuery(new URLSearchParams(init));

  it('sends amounts in minor units by the currency and drops the console-only paging', () => {
    const sent = q({ currency: 'USD', minAmount: '42', maxAmount: '42.00', back: '-' });
    expect(sent.ok && sent.query.toString()).toBe('currency=USD&minAmount=4200&maxAmount=4200');
    const yen = q({ currency: 'JPY', minAmount: '500' });
    expect(yen.ok && yen.query.get('minAmount')).toBe('500');
  });

  it('refuses a value no select offers, and an amount without a currency, naming it', () => {
    expect(q({ flow: 'sale' })).toEqual({
      ok: false,
      message: expect.stringContaining('Flow “sale”'),
    });
    expect(q({ status: 'nope' })).toEqual({
      ok: false,
      message: expect.stringContaining('Status'),
    });
    expect(q({ currency: 'XXX' })).toEqual({ ok: false, message: expect.stringContaining('XXX') });
    expect(q({ minAmount: '42' })).toEqual({
      ok: false,
      message: 'Min amount: choose a currency to search by amount.',
    });
    expect(q({ currency: 'USD', maxAmount: '4.999' })).toEqual({
      ok: false,
      message: expect.stringContaining('at most 2 after the point'),
    });
  });

  it('refuses a status the chosen flow never has, naming the ones it has', () => {
    expect(q({ flow: 'payout', status: 'captured' })).toEqual({
      ok: false,
      message: expect.stringContaining('not one a payout saga has'),
    });
    expect(q({ flow: 'transfer', status: 'transferred' }).ok).toBe(true);
  });

  it('offers the token’s own endpoints, else the configured ones, and refuses another', () => {
    expect(endpointChoices({ endpoints: ['1111'] }, ['2222'])).toEqual(['1111']);
    expect(endpointChoices('all', ['2222'])).toEqual(['2222']);
    expect(endpointChoices('all', [])).toBeUndefined();
    const refused = apiQuery(new URLSearchParams({ endpoint: '2222' }), ['1111']);
    expect(refused).toEqual({ ok: false, message: expect.stringContaining('choose one of 1111') });
    expect(apiQuery(new URLSearchParams({ endpoint: '1111' }), ['1111']).ok).toBe(true);
    // A typed endpoint (no list) goes to the API, which validates it and says what is wrong.
    expect(apiQuery(new URLSearchParams({ endpoint: 'x1' })).ok).toBe(true);
  });
});
