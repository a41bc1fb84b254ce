import { constants, createHmac, randomBytes, sign, type KeyObject } from 'node:crypto';
import OAuth from 'oauth-1.0a';
import { GatewayClientError } from '../errors';

export type OAuthSignatureMethod = 'HMAC-SHA1' | 'RSA-SHA256';

export interface OAuthSigner {
  readonly method: OAuthSignatureMethod;
  /** Base64 signature of the UTF-8 base string. */
  sign(baseString: string): string;
}

/**
 * OAuth 1.0a HMAC-SHA1 (spec §5.2): key = merchant control key + `&` + empty token secret, as the
 * vendor's helper page states. Note: oauth-1.0a would pass `percentEncode(secret) + '&'`; we
 * ignore that and use the control key verbatim (identical for the usual UUID-style keys).
 */
export function hmacSha1Signer(controlKey: string): OAuthSigner {
  const key = `${controlKey}&`;
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

export interface OAuthSignInput {
  /** Normalised request URL (scheme and host lower-case, no default port, no query). */
  readonly url: string;
  /** Form body parameters (they are signed; `oauth_*` parameters never go in the body). */
  readonly params: Readonly<Record<string, string>>;
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
 * Signs one POST with oauth-1.0a doing parameter gathering, encoding, sorting and the base string
 * (its RFC 3986 encoder and its sort are proven equal to our independent implementation in
 * oauth.spec.ts, including property tests, so they are used as is). What we override: the nonce (crypto.randomBytes, injectable), the timestamp (injectable clock) and the
 * hash function. oauth-1.0a merges the body parameters INTO the object it returns, so the header
 * is built from the `oauth_*` keys only.
 */
export function signOAuthRequest(input: OAuthSignInput): OAuthSignOutput {
  for (const name of Object.keys(input.params)) {
    if (name.startsWith('oauth_')) {
      throw new GatewayClientError('invalid-request', `body field ${name} is reserved for OAuth`, {
        field: name,
      });
    }
  }
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
    data: { ...input.params },
  }) as unknown as Record<string, string>;
  const oauthParams: Record<string, string> = {};
  for (const [k, v] of Object.entries(authorized)) {
    if (k.startsWith('oauth_')) oauthParams[k] = String(v);
  }
  const { Authorization } = oauth.toHeader(oauthParams as unknown as OAuth.Authorization);
  return { authorization: Authorization, baseString, oauthParams };
}
