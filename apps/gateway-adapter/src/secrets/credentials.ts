import { createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, isAbsolute, resolve } from 'node:path';
import { z } from 'zod';
import { open, type Card } from '@payments/contracts';
import {
  checkCurrencyExponents,
  GatewayClientError,
  loadRsaPrivateKey,
  MIN_RSA_BITS,
  type CurrencyExponents,
  type ReplyFormat,
} from '@payments/payment-gateway';
import type { GatewayAdapterConfig } from '../config';

/**
 * The adapter's secrets, checked at boot (DESIGN.md guarantee 8): the credentials registry (one
 * entry per merchant endpoint or endpoint group) and the key that opens sealed card data. Every
 * problem is reported naming the variable, the entry and the field — never a secret's value.
 */
export class AdapterSecretsError extends Error {
  readonly code = 'SECRETS_INVALID';
  constructor(readonly problems: readonly string[]) {
    super(`gateway-adapter: invalid secrets\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'AdapterSecretsError';
  }
}

const Digits = z.string().regex(/^\d{1,19}$/, 'digits (an int64 id)');

const Limits = z.strictObject({
  maxConcurrent: z.number().int().min(1).max(1000).optional(),
  ratePerSecond: z.number().positive().max(100_000).optional(),
  burst: z.number().int().min(1).max(100_000).optional(),
  maxWaitMs: z.number().int().min(0).max(60_000).optional(),
  maxQueued: z.number().int().min(1).max(100_000).optional(),
  breakerFailures: z.number().int().min(1).max(1000).optional(),
  breakerCooldownMs: z.number().int().min(1).max(3_600_000).optional(),
  statusRatePerSecond: z.number().positive().max(100_000).optional(),
  statusBurst: z.number().int().min(1).max(100_000).optional(),
  moneyReservedTokens: z.number().int().min(0).max(100_000).optional(),
  statusMinIntervalMs: z.number().int().min(0).max(3_600_000).optional(),
});

const Entry = z
  .strictObject({
    /** Free label for logs and metrics; defaults to `endpoint <id>` / `group <id>`. */
    name: z.string().min(1).max(64).optional(),
    endpointId: Digits.optional(),
    endpointGroupId: Digits.optional(),
    /** Gateway API root including any prefix, e.g. `https://gate.example.com/paynet`. */
    baseUrl: z.string().min(1),
    login: z.string().min(1).max(128),
    controlKey: z.string().min(8, 'at least 8 characters').optional(),
    controlKeyFile: z.string().min(1).optional(),
    /** PEM (PKCS#8 or PKCS#1), at least 2048 bits; only v4 (OAuth RSA-SHA256) operations need it. */
    rsaPrivateKey: z.string().min(1).optional(),
    rsaPrivateKeyFile: z.string().min(1).optional(),
    limits: Limits.optional(),
    /**
     * Decimals this endpoint's gateway expects per currency where it is not the ISO 4217
     * exponent (`{ "JPY": 2 }`, `"*"` for every currency not listed); default ISO for all.
     */
    currencyExponents: z.record(z.string(), z.number()).optional(),
    /**
     * How create-card-ref is signed for this endpoint: `v2` (SHA-1 control, the default) or
     * `v4` (OAuth RSA-SHA256; needs the RSA private key).
     */
    cardRefApi: z.enum(['v2', 'v4']).optional(),
    /**
     * The reply format asked of this endpoint's gateway: `json` (the default, the Accept header)
     * or `form` (no special Accept: the gateway's default form-encoded replies).
     */
    replyFormat: z.enum(['json', 'form']).optional(),
  })
  .refine((e) => (e.endpointId === undefined) !== (e.endpointGroupId === undefined), {
    message: 'exactly one of endpointId and endpointGroupId',
    path: ['endpointId'],
  })
  .refine((e) => (e.controlKey === undefined) !== (e.controlKeyFile === undefined), {
    message: 'exactly one of controlKey and controlKeyFile',
    path: ['controlKey'],
  })
  .refine((e) => !(e.rsaPrivateKey !== undefined && e.rsaPrivateKeyFile !== undefined), {
    message: 'at most one of rsaPrivateKey and rsaPrivateKeyFile',
    path: ['rsaPrivateKey'],
  });

const CredentialsFile = z.strictObject({ endpoints: z.array(z.unknown()).min(1) });

/** One entry's limits: the entry's `limits` over the environment's defaults, resolved. */
export type EndpointLimits = Required<z.infer<typeof Limits>>;

/** The environment's defaults (GATEWAY_* variables); the money reserve may be left to the burst. */
export type LimitDefaults = Omit<EndpointLimits, 'moneyReservedTokens'> & {
  readonly moneyReservedTokens?: number | undefined;
};

/**
 * Resolves an entry's limits. The money reserve defaults to half the burst (rounded down) and
 * must stay below the burst, or no status query could ever be sent.
 */
export function resolveLimits(
  defaults: LimitDefaults,
  entry: z.infer<typeof Limits> | undefined,
): { readonly limits: EndpointLimits } | { readonly problem: string } {
  const merged = { ...defaults, ...entry };
  const moneyReservedTokens = merged.moneyReservedTokens ?? Math.floor(merged.burst / 2);
  if (moneyReservedTokens >= merged.burst) {
    return {
      problem: `limits.moneyReservedTokens (or GATEWAY_MONEY_RESERVED_TOKENS): ${moneyReservedTokens} must be less than the burst (${merged.burst}), or no status query could ever be sent`,
    };
  }
  return { limits: { ...merged, moneyReservedTokens } };
}

/** One validated registry entry. Holds secrets: never log it (toJSON hides them). */
export interface EndpointCredentials {
  /** Label for logs and metrics, e.g. `endpoint 1113`. */
  readonly name: string;
  /** The id requests name (`merchant.endpointId`) and the callback URL carries. */
  readonly id: string;
  readonly endpoint: { readonly endpointId: string } | { readonly endpointGroupId: string };
  readonly baseUrl: string;
  readonly login: string;
  readonly controlKey: string;
  readonly rsaPrivateKey?: KeyObject;
  readonly limits: EndpointLimits;
  /** Wire exponents where this endpoint's gateway does not use ISO 4217 (empty: ISO). */
  readonly currencyExponents: CurrencyExponents;
  /** create-card-ref through v2 (control) or v4 (RSA-SHA256). */
  readonly cardRefApi: 'v2' | 'v4';
  /** JSON replies (the default) or the gateway's form-encoded ones. */
  readonly replyFormat: ReplyFormat;
}

export type FileReader = (path: string) => string;
const readUtf8: FileReader = (path) => readFileSync(path, 'utf8');

function describeIssues(issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(entry)';
    const message = issue.code === 'invalid_type' ? `expected ${issue.expected}` : issue.message;
    return `${path}: ${message}`;
  });
}

function baseUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return 'baseUrl: expected an http(s) URL';
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'baseUrl: expected http(s)';
  if (url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '') {
    return 'baseUrl: must not carry user info, query or fragment';
  }
  return undefined;
}

/**
 * Parses and checks the registry. `source` names where it came from (the variable), `baseDir`
 * resolves relative key file paths (the credentials file's directory, or the working directory).
 */
export function parseCredentials(
  text: string,
  source: string,
  defaults: LimitDefaults,
  baseDir: string,
  readFile: FileReader = readUtf8,
): EndpointCredentials[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AdapterSecretsError([`${source}: not valid JSON`]);
  }
  const file = CredentialsFile.safeParse(json);
  if (!file.success) {
    throw new AdapterSecretsError(
      describeIssues(file.error.issues).map(
        (p) => `${source}: ${p} (expected { "endpoints": [ ... ] })`,
      ),
    );
  }
  const problems: string[] = [];
  const entries: EndpointCredentials[] = [];
  const seen = new Map<string, string>();
  file.data.endpoints.forEach((raw, index) => {
    const rawId =
      typeof raw === 'object' && raw !== null
        ? ((raw as Record<string, unknown>).endpointId ??
          (raw as Record<string, unknown>).endpointGroupId)
        : undefined;
    const label = `${source} entry #${index}${typeof rawId === 'string' && /^\d{1,19}$/.test(rawId) ? ` (endpoint ${rawId})` : ''}`;
    const parsed = Entry.safeParse(raw);
    if (!parsed.success) {
      problems.push(...describeIssues(parsed.error.issues).map((p) => `${label}: ${p}`));
      return;
    }
    const e = parsed.data;
    const entryProblems: string[] = [];
    const urlProblem = baseUrlProblem(e.baseUrl);
    if (urlProblem) entryProblems.push(urlProblem);
    const path = (p: string) => (isAbsolute(p) ? p : resolve(baseDir, p));
    const read = (field: string, p: string): string | undefined => {
      try {
        return readFile(path(p));
      } catch {
        entryProblems.push(`${field}: cannot read the file ${path(p)}`);
        return undefined;
      }
    };
    const controlKey =
      e.controlKey ?? (e.controlKeyFile ? read('controlKeyFile', e.controlKeyFile)?.trim() : '');
    if (controlKey !== undefined && controlKey.length < 8) {
      entryProblems.push('controlKey: expected at least 8 characters');
    }
    const pem =
      e.rsaPrivateKey ??
      (e.rsaPrivateKeyFile ? read('rsaPrivateKeyFile', e.rsaPrivateKeyFile) : undefined);
    let rsaPrivateKey: KeyObject | undefined;
    if (pem !== undefined) {
      try {
        rsaPrivateKey = loadRsaPrivateKey(pem);
      } catch (error) {
        const why = error instanceof GatewayClientError ? error.message : 'could not be read';
        entryProblems.push(
          `${e.rsaPrivateKeyFile ? 'rsaPrivateKeyFile' : 'rsaPrivateKey'}: ${why}`,
        );
      }
    }
    const currencyExponents = e.currencyExponents ?? {};
    try {
      checkCurrencyExponents(currencyExponents);
    } catch (error) {
      if (!(error instanceof GatewayClientError)) throw error;
      entryProblems.push(error.message);
    }
    const cardRefApi = e.cardRefApi ?? 'v2';
    if (cardRefApi === 'v4' && pem === undefined) {
      entryProblems.push('cardRefApi: v4 signs with RSA-SHA256 and needs rsaPrivateKey(File)');
    }
    const id = e.endpointId ?? e.endpointGroupId ?? '';
    const name = e.name ?? (e.endpointId ? `endpoint ${id}` : `group ${id}`);
    const previous = seen.get(id);
    if (previous !== undefined) entryProblems.push(`id ${id} is already used by ${previous}`);
    seen.set(id, label);
    const limits = resolveLimits(defaults, e.limits);
    if ('problem' in limits) entryProblems.push(limits.problem);
    if (entryProblems.length > 0 || controlKey === undefined || 'problem' in limits) {
      problems.push(...entryProblems.map((p) => `${label}: ${p}`));
      return;
    }
    entries.push(
      hideSecrets({
        name,
        id,
        endpoint: e.endpointId ? { endpointId: id } : { endpointGroupId: id },
        baseUrl: e.baseUrl,
        login: e.login,
        controlKey,
        ...(rsaPrivateKey ? { rsaPrivateKey } : {}),
        limits: limits.limits,
        currencyExponents,
        cardRefApi,
        replyFormat: e.replyFormat ?? 'json',
      }),
    );
  });
  if (problems.length > 0) throw new AdapterSecretsError(problems);
  return entries;
}

function hideSecrets<T extends EndpointCredentials>(entry: T): T {
  Object.defineProperty(entry, 'toJSON', {
    enumerable: false,
    value: () => ({ name: entry.name, id: entry.id, baseUrl: entry.baseUrl, login: entry.login }),
  });
  return entry;
}

/**
 * Opens sealed cards (contracts `open`, RSA-OAEP-256 + AES-256-GCM, payment id as associated
 * data). The key stays in a private field; the object prints as `[CardOpener]`.
 */
export class CardOpener {
  readonly #key: KeyObject;

  constructor(pem: string) {
    let key: KeyObject;
    try {
      key = createPrivateKey({ key: pem, format: 'pem' });
    } catch {
      throw new Error('could not be read (a PEM RSA private key expected)');
    }
    if (key.asymmetricKeyType !== 'rsa') throw new Error('is not an RSA private key');
    const bits = key.asymmetricKeyDetails?.modulusLength ?? 0;
    if (bits < MIN_RSA_BITS) {
      throw new Error(`has ${bits} bits; at least ${MIN_RSA_BITS} required`);
    }
    this.#key = key;
  }

  open(sealed: string, paymentId: string): Card {
    return open(sealed, this.#key, paymentId);
  }

  toJSON(): string {
    return '[CardOpener]';
  }
}

export interface AdapterSecrets {
  readonly endpoints: readonly EndpointCredentials[];
  readonly cards: CardOpener;
}

/** Reads and checks every secret named by the configuration; throws AdapterSecretsError. */
export function loadAdapterSecrets(
  config: Pick<GatewayAdapterConfig, 'credentials' | 'cardKey' | 'limits'>,
  readFile: FileReader = readUtf8,
  cwd: string = process.cwd(),
): AdapterSecrets {
  const problems: string[] = [];
  let endpoints: EndpointCredentials[] = [];
  const { file, inline } = config.credentials;
  if ((file === undefined) === (inline === undefined)) {
    problems.push(
      'GATEWAY_CREDENTIALS_FILE / GATEWAY_CREDENTIALS: expected exactly one of them to be set',
    );
  } else {
    try {
      if (file !== undefined) {
        let text: string | undefined;
        try {
          text = readFile(resolve(cwd, file));
        } catch {
          problems.push(`GATEWAY_CREDENTIALS_FILE: cannot read the file ${resolve(cwd, file)}`);
        }
        if (text !== undefined) {
          endpoints = parseCredentials(
            text,
            'GATEWAY_CREDENTIALS_FILE',
            config.limits,
            dirname(resolve(cwd, file)),
            readFile,
          );
        }
      } else if (inline !== undefined) {
        endpoints = parseCredentials(inline, 'GATEWAY_CREDENTIALS', config.limits, cwd, readFile);
      }
    } catch (error) {
      if (!(error instanceof AdapterSecretsError)) throw error;
      problems.push(...error.problems);
    }
  }

  let cards: CardOpener | undefined;
  const key = config.cardKey;
  if ((key.inline === undefined) === (key.file === undefined)) {
    problems.push(
      'CARD_SEALING_PRIVATE_KEY / CARD_SEALING_PRIVATE_KEY_FILE: expected exactly one of them to be set',
    );
  } else {
    const variable =
      key.file !== undefined ? 'CARD_SEALING_PRIVATE_KEY_FILE' : 'CARD_SEALING_PRIVATE_KEY';
    let pem: string | undefined = key.inline;
    if (key.file !== undefined) {
      try {
        pem = readFile(resolve(cwd, key.file));
      } catch {
        problems.push(`${variable}: cannot read the file ${resolve(cwd, key.file)}`);
      }
    }
    if (pem !== undefined) {
      try {
        cards = new CardOpener(pem);
      } catch (error) {
        problems.push(
          `${variable}: the key ${error instanceof Error ? error.message : 'is invalid'}`,
        );
      }
    }
  }
  if (problems.length > 0 || cards === undefined) throw new AdapterSecretsError(problems);
  return { endpoints, cards };
}
