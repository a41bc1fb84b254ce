import { z } from 'zod';
import { commonVars, envVar, kafkaVars, port, ResolvedConfig } from '@payments/config';

/**
 * Everything callback-ingest reads from its environment, validated once at boot. No database
 * (DESIGN.md). The control keys it verifies callbacks with join this shape, marked secret.
 */
export const callbackIngestConfigShape = {
  version: envVar('APP_VERSION', z.string().min(1).default('0.1.0-dev'), {
    description: 'the build version shown in logs',
  }),
  http: { port: envVar('HTTP_PORT', port(3003)) },
  log: commonVars,
  kafka: kafkaVars,
};

export type CallbackIngestConfig = ResolvedConfig<typeof callbackIngestConfigShape>;

export const CALLBACK_INGEST_CONFIG = Symbol('CALLBACK_INGEST_CONFIG');
