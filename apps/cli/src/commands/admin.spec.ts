import { render } from './admin';

describe('render', () => {
  it('prints scalars as name: value and each list as a titled section', () => {
    expect(
      render({
        id: 'pay-1',
        status: 'approved',
        amount: { minor: 5, currency: 'EUR' },
        history: [{ v: 1 }, 'x'],
      }),
    ).toEqual([
      'id: pay-1',
      'status: approved',
      'amount: {"minor":5,"currency":"EUR"}',
      '',
      'history (2)',
      '  {"v":1}',
      '  x',
    ]);
  });
});
