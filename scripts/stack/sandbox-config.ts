import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './processes';

/**
 * The gateway sandbox as the stack configures it: its merchants and test card, the adapter's
 * credentials pointed at the stack's sandbox, callback-ingest's control keys and the card-sealing
 * test keys. Kept apart from the stack's processes (payment-stack.ts) so that command builders
 * (payout-commands.ts) and the bench read them without the stack.
 */

/** The sandbox's default merchant (apps/gateway-sandbox/sandbox.merchants.json). */
export const SANDBOX_MERCHANT = {
  login: 'sandbox-merchant',
  controlKey: 'B17F59B4-A7DC-41B4-8FF9-37D986B43D20',
  /** USD, no 3-D Secure. */
  plainEndpoint: '1113',
  /** USD, 3-D Secure answered with redirect-to. */
  threeDsEndpoint: '1111',
  /** USD, no 3-D Secure; its universal payment-form authorizes (a hold to capture). */
  paymentFormPreauthEndpoint: '1118',
} as const;

/**
 * The sandbox's second merchant: its own login, control key and RSA key pair, one USD endpoint
 * whose card references the adapter makes through v4 (RSA-SHA256). Beside the first it proves
 * that every request is signed with its own endpoint's secrets and that a callback is verified
 * with the key of the payment's own merchant.
 */
export const SECOND_MERCHANT = {
  login: 'sandbox-merchant-b',
  controlKey: '6C0E2F4A-93D1-4B7E-A5C8-1F2D3E4B5A69',
  endpoint: '1213',
} as const;

/** The gateway-adapter's card-sealing test key pair: commands seal cards to the public key. */
export const CARD_PUBLIC_KEY_FILE = path.join(
  REPO_ROOT,
  'apps/gateway-adapter/test-keys/card-sealing-test-public.pem',
);
export const CARD_PRIVATE_KEY_FILE = path.join(
  REPO_ROOT,
  'apps/gateway-adapter/test-keys/card-sealing-test-private.pem',
);
const SANDBOX_CREDENTIALS = path.join(REPO_ROOT, 'apps/gateway-adapter/credentials.sandbox.json');

/** A Luhn-valid test card; the CVV picks the sandbox's outcome (123 approved, 116 declined, ...). */
export const TEST_CARD_NUMBER = '4444444444444448';

/**
 * The sandbox's default merchants with another processing delay per operation (the default file
 * says 1 s), written to `dir`; pass the path as the sandbox's SANDBOX_MERCHANTS_FILE.
 */
export function sandboxMerchantsWithDelay(dir: string, processingDelayMs: number): string {
  const source = path.join(REPO_ROOT, 'apps/gateway-sandbox/sandbox.merchants.json');
  const config = JSON.parse(readFileSync(source, 'utf8')) as {
    merchants: { processingDelayMs?: number; rsaPublicKeyFile?: string }[];
  };
  for (const m of config.merchants) {
    m.processingDelayMs = processingDelayMs;
    if (m.rsaPublicKeyFile)
      m.rsaPublicKeyFile = path.resolve(path.dirname(source), m.rsaPublicKeyFile);
  }
  const file = path.join(dir, `sandbox.merchants.${processingDelayMs}ms.json`);
  writeFileSync(file, JSON.stringify(config, null, 2));
  return file;
}

/** Each endpoint's control key as the adapter's sandbox credentials give it (callback-ingest's). */
export function callbackControlKeys(): Record<string, string> {
  const file = JSON.parse(readFileSync(SANDBOX_CREDENTIALS, 'utf8')) as {
    endpoints: { endpointId?: string; endpointGroupId?: string; controlKey: string }[];
  };
  return Object.fromEntries(
    file.endpoints.map((e) => [e.endpointId ?? e.endpointGroupId ?? '', e.controlKey]),
  );
}

/** The adapter's sandbox credentials with the sandbox's actual address and absolute key paths. */
export function sandboxCredentials(
  sandboxUrl: string,
  replyFormat: 'json' | 'form',
  limits: Readonly<Record<string, Record<string, number>>>,
): string {
  const file = JSON.parse(readFileSync(SANDBOX_CREDENTIALS, 'utf8')) as {
    endpoints: {
      endpointId?: string;
      baseUrl: string;
      rsaPrivateKeyFile?: string;
      replyFormat?: string;
      limits?: Record<string, number>;
    }[];
  };
  for (const entry of file.endpoints) {
    entry.baseUrl = `${sandboxUrl}/paynet`;
    if (replyFormat === 'form') entry.replyFormat = 'form';
    const own = entry.endpointId === undefined ? undefined : limits[entry.endpointId];
    if (own !== undefined) entry.limits = { ...entry.limits, ...own };
    if (entry.rsaPrivateKeyFile) {
      entry.rsaPrivateKeyFile = path.resolve(
        path.dirname(SANDBOX_CREDENTIALS),
        entry.rsaPrivateKeyFile,
      );
    }
  }
  return JSON.stringify(file, null, 2);
}
