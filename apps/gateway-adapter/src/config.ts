import { z } from 'zod';
import { commonVars, envVar, kafkaVars, port, ResolvedConfig } from '@payments/config';

/**
 * Everything the gateway-adapter reads from its environment, validated once at boot.
 * Signing secrets (control keys, RSA private keys) and the card-data opening key join this shape,
 * marked `secret: true`, when the gateway client lands.
 */
export const gatewayAdapterConfigShape = {
  version: envVar('APP_VERSION', z.string().min(1).default('0.1.0-dev'), {
    description: 'the build version shown in logs',
  }),
  http: { port: envVar('HTTP_PORT', port(3002)) },
  log: commonVars,
  kafka: kafkaVars,
};

export type GatewayAdapterConfig = ResolvedConfig<typeof gatewayAdapterConfigShape>;

export const GATEWAY_ADAPTER_CONFIG = Symbol('GATEWAY_ADAPTER_CONFIG');
