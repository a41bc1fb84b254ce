import { eventLine } from './event-line';

describe('eventLine', () => {
  it('shows time, type, saga, version, money in minor units and the notable fields', () => {
    expect(
      eventLine({
        time: '2026-11-24T10:00:00.000Z',
        subject: 'pay-1',
        event: {
          type: 'approved',
          version: 4,
          amount: { minor: 1234, currency: 'EUR' },
          gatewayOrderId: '901',
          card: { bin: '411111', last4: '1111' },
        },
      }),
    ).toBe(
      '2026-11-24T10:00:00.000Z  approved  pay-1  v4  amount=1234 EUR (minor units)  gatewayOrderId=901',
    );
  });

  it('names the payer action', () => {
    expect(
      eventLine({
        time: 't',
        subject: 's',
        event: { type: 'action-required', action: { kind: 'redirect' } },
      }),
    ).toBe('t  action-required  s  action=redirect');
  });
});
