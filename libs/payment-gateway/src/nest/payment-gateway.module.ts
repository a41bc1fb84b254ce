import {
  Module,
  type DynamicModule,
  type OnModuleDestroy,
  Inject,
  Injectable,
} from '@nestjs/common';
import { PaymentGatewayClient, type PaymentGatewayClientConfig } from '../client';

/** Injection token for the options; the client itself is provided by its class. */
export const PAYMENT_GATEWAY_OPTIONS = Symbol('PAYMENT_GATEWAY_OPTIONS');

/** Closes the client's connection pools when the Nest application shuts down. */
@Injectable()
class PaymentGatewayLifecycle implements OnModuleDestroy {
  constructor(@Inject(PaymentGatewayClient) private readonly client: PaymentGatewayClient) {}
  async onModuleDestroy(): Promise<void> {
    await this.client.close();
  }
}

/**
 * Thin Nest adapter: `PaymentGatewayModule.forRoot(options)` provides one
 * {@link PaymentGatewayClient}. All logic stays in the framework-free library.
 */
@Module({})
export class PaymentGatewayModule {
  static forRoot(options: PaymentGatewayClientConfig, global = false): DynamicModule {
    return {
      module: PaymentGatewayModule,
      global,
      providers: [
        { provide: PAYMENT_GATEWAY_OPTIONS, useValue: options },
        {
          provide: PaymentGatewayClient,
          useFactory: (o: PaymentGatewayClientConfig) => new PaymentGatewayClient(o),
          inject: [PAYMENT_GATEWAY_OPTIONS],
        },
        PaymentGatewayLifecycle,
      ],
      exports: [PaymentGatewayClient],
    };
  }
}
