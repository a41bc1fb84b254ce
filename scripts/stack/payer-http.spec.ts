import {
  acsChallengePage,
  autoPostPage,
  hostedCardPage,
} from '../../apps/gateway-sandbox/src/domain/pages';
import { formOf } from './payer-http';

/**
 * The scripted payer reads the sandbox's own markup (the page builders the sandbox serves), so a
 * change to the pages breaks here rather than as payers who cannot act in a chaos run.
 */
describe('formOf', () => {
  const page = 'http://127.0.0.1:4000/acs/t0k3n';

  it("reads the ACS challenge form's action", () => {
    const html = acsChallengePage({
      action: 'http://127.0.0.1:4000/acs/t0k3n/submit',
      merchantOrder: 'o-1',
      amount: '12.00',
      currency: 'USD',
      lastFour: '4448',
      hint: '12345',
    });
    expect(formOf(html, 'acsForm', page)).toEqual({
      action: 'http://127.0.0.1:4000/acs/t0k3n/submit',
      fields: {},
    });
    expect(formOf(html, 'hppForm', page)).toBeUndefined();
  });

  it('reads the return to the merchant: its action and every hidden field, unescaped', () => {
    const html = autoPostPage('Returning to the merchant', 'http://shop.test/return/1111?a=1&b=2', {
      status: 'approved',
      orderid: '42',
      merchant_order: 'o-"1"',
      control: 'abc',
    });
    expect(formOf(html, 'autoPost', page)).toEqual({
      action: 'http://shop.test/return/1111?a=1&b=2',
      fields: { status: 'approved', orderid: '42', merchant_order: 'o-"1"', control: 'abc' },
    });
  });

  it("resolves the hosted payout form's action against the page", () => {
    const html = hostedCardPage({
      action: '/hpp/p4y',
      title: 'Payout',
      merchantOrder: 'o-2',
      amount: '30.00',
      currency: 'USD',
      destination: true,
    });
    expect(formOf(html, 'hppForm', 'http://127.0.0.1:4000/hpp/p4y')).toEqual({
      action: 'http://127.0.0.1:4000/hpp/p4y',
      fields: {},
    });
  });
});
