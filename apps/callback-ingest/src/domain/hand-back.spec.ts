import { handBackCommand } from './hand-back';

const PAYMENT = '3dcd1a52-6a4b-4b38-9d7e-1f6f1f0c2b11';
const AT = '2026-11-23T10:00:00.000Z';
const cres = Buffer.from(JSON.stringify({ messageType: 'CRes', transStatus: 'Y' })).toString(
  'base64',
);

describe('3-D Secure hand-back → upload command', () => {
  it('a CRes posted to the return endpoint becomes upload-cres-result for the payment', () => {
    const params = { cres, orderid: '77', merchant_order: PAYMENT };
    const command = handBackCommand({ endpointId: '1114', params, receivedAt: AT });
    expect(command).toMatchObject({
      type: 'upload-cres-result',
      paymentId: PAYMENT,
      merchant: { endpointId: '1114' },
      occurredAt: AT,
      cRes: cres,
    });
    // The same POST replayed is the same command (the orchestrator deduplicates by command id).
    expect(handBackCommand({ endpointId: '1114', params, receivedAt: AT })?.commandId).toBe(
      command?.commandId,
    );
    expect(
      handBackCommand({ endpointId: '1114', params: { ...params, cres: 'eyJ9' }, receivedAt: AT })
        ?.commandId,
    ).not.toBe(command?.commandId);
  });

  it('the cRes spelling and a 1.0.2 PaRes are handed back too', () => {
    expect(
      handBackCommand({
        endpointId: '1114',
        params: { cRes: cres, merchant_order: PAYMENT },
        receivedAt: AT,
      }),
    ).toMatchObject({ type: 'upload-cres-result' });
    expect(
      handBackCommand({
        endpointId: '1115',
        params: { PaRes: 'PFBBUmVzPg==', MD: '77', merchant_order: PAYMENT },
        receivedAt: AT,
      }),
    ).toMatchObject({ type: 'upload-pares-result', paRes: 'PFBBUmVzPg==' });
  });

  it.each([
    ['a signed status return', { status: 'approved', orderid: '1', merchant_order: PAYMENT }],
    ['no payment named', { cres, orderid: '77', merchant_order: 'order-42' }],
    ['a value that is no Base64', { cres: '<script>', merchant_order: PAYMENT }],
    ['an oversized CRes', { cres: 'A'.repeat(5000), merchant_order: PAYMENT }],
  ])('%s is no hand-back (the usual return path applies)', (_name, params) => {
    expect(handBackCommand({ endpointId: '1114', params, receivedAt: AT })).toBeUndefined();
  });
});
