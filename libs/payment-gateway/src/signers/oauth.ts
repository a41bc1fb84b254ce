import { constants, createHmac, randomBytes, sign, type KeyObject } from 'node:crypto';
import OAuth from 'oauth-1.0a';
import { parameterPairs, percentEncode, type FormParams } from '../encoding';
import { GatewayClientError } from '../errors';

export type OAuthSignatureMethod = 'HMAC-SHA1' | 'RSA-SHA256';

export interface OAuthSigner {
  readonly method: OAuthSignatureMethod;
  /** Base64 signature of the UTF-8 base string. */
  sign(baseString: string): string;
}

/**
 * OAuth 1.0a HMAC-SHA1 (spec §5.2, RFC 5849 §3.4.2): key = percent-encode(consumer secret) + `&`
 * + percent-encode(token secret), the consumer secret being the merchant control key and the
 * token secret empty. For UUID-style keys this is the key verbatim + `&`, as the vendor's helper
 * page shows; for a key with reserved or non-ASCII characters only the encoded form is what a
 * standard OAuth verifier (proven against oauthlib) computes.
 */
export function hmacSha1Signer(controlKey: string): OAuthSigner {
  const key = `${percentEncode(controlKey)}&`;
  return {
    method: 'HMAC-SHA1',
    sign: (base) => createHmac('sha1', key).update(base, 'utf8').digest('base64'),
  };
}

/** OAuth 1.0a RSA-SHA256 (spec §5.3): RSASSA-PKCS1-v1_5 over SHA-256 of the UTF-8 base string. */
export function rsaSha256Signer(privateKey: KeyObject): OAuthSigner {
  return {
    method: 'RSA-SHA256',
    sign: (base) =>
      sign('sha256', Buffer.from(base, 'utf8'), {
        key: privateKey,
        padding: constants.RSA_PKCS1_PADDING,
      }).toString('base64'),
  };
}

/** 16 random bytes, lowercase hex (the vendor examples' format). */
export function randomNonce(): string {
  return randomBytes(16).toString('hex');
}

/**
 * Form body parameters: a record, or name/value pairs in which a name may repeat (RFC 5849
 * §3.4.1.3.1: every occurrence is signed; §3.4.1.3.2 sorts by name, then by value).
 */
export type OAuthParams =
  Readonly<Record<string, string>> | ReadonlyArray<readonly [name: string, value: string]>;

export interface OAuthSignInput {
  /** Normalised request URL (scheme and host lower-case, no default port, no query). */
  readonly url: string;
  /**
   * Form body parameters (they are signed; `oauth_*` parameters never go in the body). Pairs may
   * repeat a name: every occurrence is signed, sorted by name then value (RFC 5849 §3.4.1.3).
   */
  readonly params: FormParams;
  readonly consumerKey: string;
  readonly signer: OAuthSigner;
  readonly timestampSeconds: number;
  readonly nonce: string;
}

export interface OAuthSignOutput {
  /** `Authorization` header value: `OAuth name="value", ...` with RFC 3986-encoded values. */
  readonly authorization: string;
  readonly baseString: string;
  /** The oauth_* parameters including oauth_signature (un-encoded). */
  readonly oauthParams: Readonly<Record<string, string>>;
}

/**
 * The parameters as oauth-1.0a takes them: one key per name, an array of values for a repeated
 * name (it sorts those values itself). `oauth_*` names are refused (they belong in the header);
 * `__proto__` is refused because oauth-1.0a merges parameters into a plain object by assignment,
 * which would drop it silently.
 */
function toOAuthData(params: FormParams): Record<string, string | string[]> {
  const data: Record<string, string | string[]> = {};
  for (const [name, value] of parameterPairs(params)) {
    if (name.startsWith('oauth_') || name === '__proto__') {
      throw new GatewayClientError('invalid-request', `body field ${name} is reserved for OAuth`, {
        field: name,
      });
    }
    const seen = Object.prototype.hasOwnProperty.call(data, name) ? data[name] : undefined;
    data[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
  }
  return data;
}

/**
 * Signs one POST with oauth-1.0a doing parameter gathering, encoding, sorting and the base string
 * (its RFC 3986 encoder and its sort are proven equal to our independent implementation in
 * oauth.spec.ts, and the whole signature equal to Python's oauthlib in
 * test/oauth-oauthlib.int-spec.ts, so they are used as is). What we override: the nonce
 * (crypto.randomBytes, injectable), the timestamp (injectable clock) and the hash function
 * (the signer computes its own key, so oauth-1.0a gets an empty consumer secret and its key
 * argument is ignored). oauth-1.0a merges the body parameters INTO the object it returns, so the
 * header is built from the `oauth_*` keys only.
 */
export function signOAuthRequest(input: OAuthSignInput): OAuthSignOutput {
  const data = toOAuthData(input.params);
  let baseString = '';
  const oauth = new OAuth({
    consumer: { key: input.consumerKey, secret: '' },
    signature_method: input.signer.method,
    hash_function: (base: string) => {
      baseString = base;
      return input.signer.sign(base);
    },
  });
  oauth.getNonce = () => input.nonce;
  oauth.getTimeStamp = () => input.timestampSeconds;

  const authorized = oauth.authorize({
    url: input.url,
    method: 'POST',
    data,
  }) as unknown as Record<string, string>;
  const oauthParams: Record<string, string> = {};
  for (const [k, v] of Object.entries(authorized)) {
    if (k.startsWith('oauth_')) oauthParams[k] = String(v);
  }
  const { Authorization } = oauth.toHeader(oauthParams as unknown as OAuth.Authorization);
  return { authorization: Authorization, baseString, oauthParams };
}
