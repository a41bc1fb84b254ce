import { Test } from '@nestjs/testing';
import { PaymentGatewayClient } from '../client';
import { PaymentGatewayModule } from './payment-gateway.module';

describe('PaymentGatewayModule', () => {
  it('forRoot provides a configured client and closes it on shutdown', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        PaymentGatewayModule.forRoot({
          baseUrl: 'https://gate.example/paynet',
          endpoint: { endpointId: '7' },
          login: 'm',
          controlKey: 'k',
        }),
      ],
    }).compile();
    const client = moduleRef.get(PaymentGatewayClient);
    expect(client).toBeInstanceOf(PaymentGatewayClient);
    expect(client.prepare('v2/status', { client_orderid: 'c' }).url.toString()).toBe(
      'https://gate.example/paynet/api/v2/status/7',
    );
    const close = jest.spyOn(client, 'close');
    await moduleRef.close();
    expect(close).toHaveBeenCalledTimes(1);
  });

  it('refuses invalid configuration at boot', async () => {
    await expect(
      Test.createTestingModule({
        imports: [
          PaymentGatewayModule.forRoot({
            baseUrl: 'not a url',
            endpoint: { endpointId: '7' },
            login: 'm',
            controlKey: 'k',
          }),
        ],
      }).compile(),
    ).rejects.toThrow(/baseUrl/);
  });
});
