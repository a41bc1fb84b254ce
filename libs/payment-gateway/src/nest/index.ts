export { PAYMENT_GATEWAY_OPTIONS, PaymentGatewayModule } from './payment-gateway.module';
