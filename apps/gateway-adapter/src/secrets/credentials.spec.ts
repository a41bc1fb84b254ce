import { generateKeyPairSync } from 'node:crypto';
import { seal } from '@payments/contracts';
import { AdapterSecretsError, loadAdapterSecrets, parseCredentials } from './credentials';

const pem = (bits: number) =>
  generateKeyPairSync('rsa', { modulusLength: bits }).privateKey.export({
    type: 'pkcs8',
    format: 'pem',
  }) as string;
const strong = generateKeyPairSync('rsa', { modulusLength: 2048 });
const strongPem = strong.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
const strongPublic = strong.publicKey.export({ type: 'spki', format: 'pem' }) as string;

const defaults = {
  maxConcurrent: 8,
  ratePerSecond: 20,
  burst: 20,
  maxWaitMs: 2000,
  maxQueued: 1_000,
  breakerFailures: 5,
  breakerCooldownMs: 30_000,
  statusRatePerSecond: 5,
  statusBurst: 5,
  moneyReservedTokens: undefined,
  statusMinIntervalMs: 1_000,
};
const CONTROL_KEY = 'B17F59B4-SECRET-CONTROL-KEY';
const entry = (over: Record<string, unknown> = {}) => ({
  endpointId: '1113',
  baseUrl: 'http://127.0.0.1:8080/paynet',
  login: 'merchant',
  controlKey: CONTROL_KEY,
  ...over,
});
const files: Record<string, string> = {
  '/keys/merchant.pem': strongPem,
  '/keys/weak.pem': pem(1024),
};
const reader = (path: string) => {
  const text = files[path];
  if (text === undefined) throw new Error('ENOENT');
  return text;
};
const parse = (endpoints: unknown[]) =>
  parseCredentials(JSON.stringify({ endpoints }), 'GATEWAY_CREDENTIALS', defaults, '/keys', reader);

function problemsOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(AdapterSecretsError);
    return (error as AdapterSecretsError).message;
  }
  throw new Error('expected AdapterSecretsError');
}

describe('credentials registry', () => {
  it('currencyExponents: ISO (empty) by default, per entry when given, checked at boot', () => {
    const [iso, jpy] = parse([
      entry(),
      entry({ endpointId: '1117', currencyExponents: { JPY: 2, '*': 2 } }),
    ]);
    expect(iso?.currencyExponents).toEqual({});
    expect(jpy?.currencyExponents).toEqual({ JPY: 2, '*': 2 });
    const message = problemsOf(() =>
      parse([
        entry({ currencyExponents: { XYZ: 2 } }),
        entry({ endpointId: '2', currencyExponents: { JPY: 7 } }),
      ]),
    );
    expect(message).toContain(
      'GATEWAY_CREDENTIALS entry #0 (endpoint 1113): currencyExponents: XYZ is not an ISO 4217 code (or "*")',
    );
    expect(message).toContain(
      'GATEWAY_CREDENTIALS entry #1 (endpoint 2): currencyExponents.JPY: expected an integer from 0 to 4',
    );
  });

  it('cardRefApi: v2 by default; v4 only with the RSA key (checked at boot)', () => {
    const [v2, v4] = parse([
      entry(),
      entry({ endpointId: '1116', cardRefApi: 'v4', rsaPrivateKeyFile: 'merchant.pem' }),
    ]);
    expect(v2?.cardRefApi).toBe('v2');
    expect(v4?.cardRefApi).toBe('v4');
    expect(problemsOf(() => parse([entry({ cardRefApi: 'v4' })]))).toContain(
      'GATEWAY_CREDENTIALS entry #0 (endpoint 1113): cardRefApi: v4 signs with RSA-SHA256 and needs rsaPrivateKey(File)',
    );
  });

  it('replyFormat: json by default, form on request, nothing else', () => {
    const [json, form] = parse([entry(), entry({ endpointId: '1116', replyFormat: 'form' })]);
    expect(json?.replyFormat).toBe('json');
    expect(form?.replyFormat).toBe('form');
    expect(problemsOf(() => parse([entry({ replyFormat: 'xml' })]))).toMatch(
      /entry #0.*replyFormat/,
    );
  });

  it('loads entries with defaults, per-entry limits, key files relative to the file', () => {
    const [a, b] = parse([
      entry({ rsaPrivateKeyFile: 'merchant.pem', limits: { maxConcurrent: 2 } }),
      entry({ endpointId: undefined, endpointGroupId: '2111', name: 'eu group' }),
    ]);
    expect(a).toMatchObject({
      name: 'endpoint 1113',
      id: '1113',
      endpoint: { endpointId: '1113' },
    });
    // The money reserve left to the default: half the burst, rounded down.
    expect(a?.limits).toEqual({ ...defaults, maxConcurrent: 2, moneyReservedTokens: 10 });
    expect(a?.rsaPrivateKey?.asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(b).toMatchObject({
      name: 'eu group',
      id: '2111',
      endpoint: { endpointGroupId: '2111' },
    });
    expect(JSON.stringify(a)).not.toContain(CONTROL_KEY);
  });

  it('resolves the money reserve per entry and refuses one that leaves status queries no token', () => {
    const [odd, explicit] = parse([
      entry({ limits: { burst: 7 } }),
      entry({ endpointId: '1114', limits: { burst: 7, moneyReservedTokens: 6 } }),
    ]);
    expect(odd?.limits.moneyReservedTokens).toBe(3);
    expect(explicit?.limits.moneyReservedTokens).toBe(6);
    const message = problemsOf(() =>
      parse([entry({ limits: { burst: 4, moneyReservedTokens: 4 } })]),
    );
    expect(message).toContain(
      'GATEWAY_CREDENTIALS entry #0 (endpoint 1113): limits.moneyReservedTokens (or GATEWAY_MONEY_RESERVED_TOKENS): 4 must be less than the burst (4)',
    );
  });

  it('names the entry and the field of every problem, never a secret value', () => {
    const message = problemsOf(() =>
      parse([
        entry(),
        entry({ endpointId: '1114', controlKey: 'short' }),
        entry({ endpointId: '1115', rsaPrivateKeyFile: 'weak.pem' }),
        entry({ endpointId: '1116', baseUrl: 'ftp://x' }),
        entry({ endpointId: '1113' }),
        { login: 'x', controlKey: CONTROL_KEY, baseUrl: 'http://a' },
      ]),
    );
    expect(message).toContain(
      'GATEWAY_CREDENTIALS entry #1 (endpoint 1114): controlKey: at least 8',
    );
    expect(message).toContain(
      'entry #2 (endpoint 1115): rsaPrivateKeyFile: RSA private key has 1024 bits; at least 2048 required',
    );
    expect(message).toContain('entry #3 (endpoint 1116): baseUrl: expected http(s)');
    expect(message).toContain('entry #4 (endpoint 1113): id 1113 is already used by');
    expect(message).toContain(
      'entry #5: endpointId: exactly one of endpointId and endpointGroupId',
    );
    expect(message).not.toContain('short');
    expect(message).not.toContain(CONTROL_KEY);
  });

  it('refuses a file that is not JSON or has no entries, and an unreadable key file', () => {
    expect(problemsOf(() => parseCredentials('{', 'X', defaults, '/', reader))).toContain(
      'X: not valid JSON',
    );
    expect(problemsOf(() => parse([]))).toContain('endpoints');
    expect(problemsOf(() => parse([entry({ rsaPrivateKeyFile: 'missing.pem' })]))).toContain(
      'rsaPrivateKeyFile: cannot read the file /keys/missing.pem',
    );
  });
});

describe('loadAdapterSecrets', () => {
  const config = (over: Partial<Record<'file' | 'inline' | 'keyFile' | 'keyInline', string>>) => ({
    credentials: { file: over.file, inline: over.inline },
    cardKey: { file: over.keyFile, inline: over.keyInline },
    limits: defaults,
  });

  it('needs exactly one source of credentials and of the card key', () => {
    const message = problemsOf(() => loadAdapterSecrets(config({}), reader, '/'));
    expect(message).toContain(
      'GATEWAY_CREDENTIALS_FILE / GATEWAY_CREDENTIALS: expected exactly one',
    );
    expect(message).toContain('CARD_SEALING_PRIVATE_KEY / CARD_SEALING_PRIVATE_KEY_FILE');
  });

  it('refuses a weak card key and names the variable', () => {
    files['/keys/creds.json'] = JSON.stringify({ endpoints: [entry()] });
    const message = problemsOf(() =>
      loadAdapterSecrets(config({ file: 'creds.json', keyFile: 'weak.pem' }), reader, '/keys'),
    );
    expect(message).toContain('CARD_SEALING_PRIVATE_KEY_FILE: the key has 1024 bits');
  });

  it('opens a card sealed to the key with the payment id, not under another id', () => {
    const secrets = loadAdapterSecrets(
      config({ inline: JSON.stringify({ endpoints: [entry()] }), keyInline: strongPem }),
      reader,
      '/',
    );
    const card = {
      number: '4444555566661111',
      expiryMonth: 1,
      expiryYear: 2031,
      cvv: '123',
      holderName: 'J D',
    };
    const sealed = seal(card, strongPublic, 'payment-1');
    expect(secrets.cards.open(sealed, 'payment-1')).toEqual(card);
    expect(() => secrets.cards.open(sealed, 'payment-2')).toThrow('could not be opened');
    expect(JSON.stringify(secrets)).not.toContain('PRIVATE KEY');
  });
});
