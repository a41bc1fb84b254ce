import { KeyObject, createPublicKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';

/**
 * Merchants, endpoints and endpoint groups, from a JSON file validated at boot. Paths to PEM
 * files are resolved relative to the JSON file.
 */
const endpointSchema = z.object({
  id: z.number().int().positive(),
  /** Currency the endpoint processes; a request in another currency is refused. */
  currency: z.string().regex(/^[A-Z]{3}$/, 'an ISO 4217 code'),
  /** A "3DS gate": CVV 321 challenges, 111 approves frictionless (facts §9). */
  threeDSecure: z.boolean().default(true),
  /** How a pending challenge is announced in status replies. */
  threeDSAction: z.enum(['html', 'redirect-to']).default('redirect-to'),
  /** `2` (CRes, upload-cres-result) or `1.0.2` (PaRes, upload-pares-result). */
  threeDSProtocol: z.enum(['2', '1.0.2']).default('2'),
  /**
   * `gateway`: the sandbox's ACS finishes the transaction itself and POSTs the signed result to
   * redirect_url. `upload`: the ACS hands `cres`/`PaRes` to redirect_url and the merchant
   * uploads it (own-3DS integrations).
   */
  threeDSResult: z.enum(['gateway', 'upload']).default('gateway'),
  /** 3DS 2 method step before the challenge (threeDSCompInd via upload-method-url-result). */
  threeDSMethod: z.boolean().default(false),
  /**
   * What the universal payment-form performs here: the endpoint's set-up decides whether it
   * charges or only holds; status replies (`transaction-type`) and callbacks (`type`) name it.
   */
  paymentForm: z.enum(['sale', 'preauth']).default('sale'),
  processingDelayMs: z.number().int().min(0).optional(),
  /**
   * Decimals this endpoint expects in amounts (and the minor units of its control checksums)
   * when they are not the currency's ISO 4217 exponent, e.g. 2 for JPY as public clients send it.
   * Amounts inside the sandbox (ledger) stay ISO minor units.
   */
  amountExponent: z.number().int().min(0).max(4).optional(),
});

const merchantSchema = z.object({
  login: z.string().min(1).max(20),
  controlKey: z.string().min(8),
  rsaPublicKeyPem: z.string().optional(),
  rsaPublicKeyFile: z.string().optional(),
  processingDelayMs: z.number().int().min(0).default(0),
  callbacks: z
    .object({ enabled: z.boolean().default(true), maxAttempts: z.number().int().min(1).optional() })
    .default({ enabled: true }),
  endpoints: z.array(endpointSchema).min(1),
  endpointGroups: z
    .array(z.object({ id: z.number().int().positive(), endpoints: z.array(z.number().int()) }))
    .default([]),
});

export const merchantsFileSchema = z.object({
  /** Password the ACS challenge page accepts; the page shows it as the hint (facts §9). */
  acsPassword: z.string().min(1).default('12345'),
  merchants: z.array(merchantSchema).min(1),
});

export type EndpointConfig = z.output<typeof endpointSchema>;
export type MerchantsFile = z.output<typeof merchantsFileSchema>;

export interface Merchant {
  readonly login: string;
  readonly controlKey: string;
  readonly publicKey: KeyObject | undefined;
  readonly processingDelayMs: number;
  readonly callbacksEnabled: boolean;
  readonly callbackMaxAttempts: number | undefined;
}

export interface Endpoint extends EndpointConfig {
  readonly merchant: Merchant;
  readonly processingDelayMs: number;
}

export class MerchantConfigError extends Error {
  override readonly name = 'MerchantConfigError';
}

export class MerchantRegistry {
  private readonly endpoints = new Map<number, Endpoint>();
  private readonly groups = new Map<number, Endpoint[]>();
  private readonly merchants = new Map<string, Merchant>();

  constructor(
    file: MerchantsFile,
    readPem: (path: string) => string = (p) => readFileSync(p, 'utf8'),
  ) {
    this.acsPassword = file.acsPassword;
    for (const m of file.merchants) {
      if (this.merchants.has(m.login)) throw new MerchantConfigError(`duplicate login ${m.login}`);
      const pem =
        m.rsaPublicKeyPem ?? (m.rsaPublicKeyFile ? readPem(m.rsaPublicKeyFile) : undefined);
      const merchant: Merchant = {
        login: m.login,
        controlKey: m.controlKey,
        publicKey: pem === undefined ? undefined : loadPublicKey(pem, m.login),
        processingDelayMs: m.processingDelayMs,
        callbacksEnabled: m.callbacks.enabled,
        callbackMaxAttempts: m.callbacks.maxAttempts,
      };
      this.merchants.set(m.login, merchant);
      for (const e of m.endpoints) {
        if (this.endpoints.has(e.id) || this.groups.has(e.id)) {
          throw new MerchantConfigError(`endpoint id ${e.id} is used twice`);
        }
        this.endpoints.set(e.id, {
          ...e,
          merchant,
          processingDelayMs: e.processingDelayMs ?? m.processingDelayMs,
        });
      }
      for (const g of m.endpointGroups) {
        if (this.endpoints.has(g.id) || this.groups.has(g.id)) {
          throw new MerchantConfigError(`endpoint group id ${g.id} is used twice`);
        }
        const members = g.endpoints.map((id) => {
          const e = this.endpoints.get(id);
          if (!e || e.merchant !== merchant) {
            throw new MerchantConfigError(`group ${g.id} names endpoint ${id} not of ${m.login}`);
          }
          return e;
        });
        this.groups.set(g.id, members);
      }
    }
  }

  readonly acsPassword: string;

  endpoint(id: number): Endpoint | undefined {
    return this.endpoints.get(id);
  }

  group(id: number): readonly Endpoint[] | undefined {
    return this.groups.get(id);
  }

  merchant(login: string): Merchant | undefined {
    return this.merchants.get(login);
  }

  allMerchants(): Merchant[] {
    return [...this.merchants.values()];
  }
}

function loadPublicKey(pem: string, login: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPublicKey(pem);
  } catch {
    throw new MerchantConfigError(`merchant ${login}: the RSA public key is not a readable PEM`);
  }
  const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
  if (key.asymmetricKeyType !== 'rsa' || bits < 2048) {
    throw new MerchantConfigError(`merchant ${login}: need an RSA public key of >= 2048 bits`);
  }
  return key;
}

/** Reads and validates a merchants JSON file; PEM paths are relative to the file. */
export function loadMerchantsFile(path: string): MerchantRegistry {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new MerchantConfigError(
      `cannot read merchants file ${path}: ${(error as Error).message}`,
    );
  }
  const parsed = merchantsFileSchema.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
    throw new MerchantConfigError(`invalid merchants file ${path}: ${issues}`);
  }
  const base = dirname(path);
  return new MerchantRegistry(parsed.data, (p) =>
    readFileSync(isAbsolute(p) ? p : resolve(base, p), 'utf8'),
  );
}
