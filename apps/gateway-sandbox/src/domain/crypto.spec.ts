import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { callbackControl, controlMatches, sha1Control } from './control';
import { parseForm } from './form';
import {
  normalizeBaseUrl,
  normalizeParameters,
  parseAuthorizationHeader,
  signatureBaseString,
  verifyHmacSha1,
  verifyRsaSha256,
} from './oauth';
import { rfc3986Encode } from './rfc3986';

interface Vector {
  id: string;
  inputs: Record<string, unknown>;
  expected: Record<string, unknown>;
  signing_string?: string;
}
const vectors: Vector[] = JSON.parse(
  readFileSync(join(__dirname, '../../../../../shared/vectors/public-vectors.json'), 'utf8'),
).vectors;
const vector = (id: string): Vector => {
  const v = vectors.find((x) => x.id === id);
  if (!v) throw new Error(`vector ${id} missing`);
  return v;
};

describe('control checksums (public vectors)', () => {
  it('computes the published callback control', () => {
    const v = vector('callback-control-hf-approved');
    const i = v.inputs as Record<string, string>;
    expect(callbackControl(i.status, i.orderid, i.merchant_order, i.merchant_control)).toBe(
      v.expected.control,
    );
  });

  it('computes the control of the empty callback', () => {
    const v = vector('callback-control-hf-empty');
    expect(callbackControl('', '', '', 'test-merchant-control')).toBe(v.expected.control);
  });

  it('refuses every published wrong control and edited fields', () => {
    const v = vector('callback-control-hf-rejects');
    const i = v.inputs as Record<string, string>;
    const good = callbackControl(i.status, i.orderid, i.merchant_order, i.merchant_control);
    for (const bad of v.expected.rejected_controls as string[]) {
      expect(controlMatches(bad, good)).toBe(false);
    }
    expect(controlMatches(good, good)).toBe(true);
    for (const field of ['status', 'orderid', 'merchant_order'] as const) {
      const edited = { ...i, [field]: 'edited' };
      const other = callbackControl(
        edited.status,
        edited.orderid,
        edited.merchant_order,
        i.merchant_control,
      );
      expect(controlMatches(good, other)).toBe(false);
    }
  });

  it('reproduces the documented request signing string', () => {
    const v = vector('request-control-doc-example');
    const key = 'B17F59B4-A7DC-41B4-8FF9-37D986B43D20';
    const parts = ['1111', '902B4FF5', '1042', 'john.smith@gmail.com'];
    expect(parts.join('') + key).toBe(v.signing_string);
    expect(sha1Control(parts, key)).toBe(v.expected.control_derived);
  });

  it('accepts only lowercase hex', () => {
    const good = sha1Control(['a'], 'key-key-key');
    expect(controlMatches(good.toUpperCase(), good)).toBe(false);
    expect(controlMatches(undefined, good)).toBe(false);
  });
});

describe('RFC 3986 and OAuth base strings', () => {
  it('encodes the published values', () => {
    const v = vector('oauth-rfc3986-encode');
    expect((v.inputs.values as string[]).map(rfc3986Encode)).toEqual(v.expected.encoded);
  });

  it('normalizes the published parameters', () => {
    const v = vector('oauth-normalize-params');
    const pairs = Object.entries(v.inputs.params as Record<string, string>);
    expect(normalizeParameters(pairs)).toBe(v.expected.normalized);
  });

  it('builds the published base string', () => {
    const v = vector('oauth-base-string-hf');
    const pairs = Object.entries(v.inputs.params as Record<string, string>);
    expect(signatureBaseString(v.inputs.method as string, v.inputs.url as string, pairs)).toBe(
      v.expected.base_string,
    );
  });

  it('builds the RFC 5849 §3.4.1.1 example base string (body, query, header, duplicates)', () => {
    const body = parseForm('c2&a3=2+q');
    const query = parseForm('b5=%3D%253D&a3=a&c%40=&a2=r%20b');
    if (!body.ok || !query.ok) throw new Error('parse');
    const header = parseAuthorizationHeader(
      'OAuth realm="Example", oauth_consumer_key="9djdj82h48djs9d2", oauth_token="kkk9d7dh3k39sjv7", ' +
        'oauth_signature_method="HMAC-SHA1", oauth_timestamp="137131201", oauth_nonce="7d8f3e4a", ' +
        'oauth_signature="bYT5CMsGcbgUdFHObYMEfcx6bsw%3D"',
    );
    if (!header.ok) throw new Error(header.reason);
    expect(header.value.get('oauth_signature')).toBe('bYT5CMsGcbgUdFHObYMEfcx6bsw=');
    const oauth = [...header.value].filter(([n]) => n !== 'realm' && n !== 'oauth_signature');
    const base = signatureBaseString(
      'POST',
      normalizeBaseUrl('http', 'Example.com:80', '/request'),
      [...query.body.pairs, ...body.body.pairs, ...oauth],
    );
    expect(base).toBe(
      'POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7',
    );
  });

  it('refuses malformed headers', () => {
    expect(parseAuthorizationHeader('Basic abc').ok).toBe(false);
    expect(parseAuthorizationHeader('OAuth a="1", a="2"').ok).toBe(false);
    expect(parseAuthorizationHeader('OAuth a=1').ok).toBe(false);
    expect(parseAuthorizationHeader('OAuth a="%zz"').ok).toBe(false);
  });

  it('verifies HMAC-SHA1 with key "controlKey&" and refuses other keys and bodies', () => {
    const base = 'POST&x&y';
    const sig = createHmac('sha1', 'secret-key&').update(base).digest('base64');
    expect(verifyHmacSha1(base, 'secret-key', sig)).toBe(true);
    expect(verifyHmacSha1(base, 'secret-kez', sig)).toBe(false);
    expect(verifyHmacSha1(`${base}z`, 'secret-key', sig)).toBe(false);
    expect(verifyHmacSha1(base, 'secret-key', 'not base64!')).toBe(false);
  });

  it('keys HMAC-SHA1 with the percent-encoded control key (RFC 5849 §3.4.2), not the raw one', () => {
    const base = 'POST&x&y';
    const key = 'a&b c/é+%';
    const encoded = createHmac('sha1', 'a%26b%20c%2F%C3%A9%2B%25&').update(base).digest('base64');
    const raw = createHmac('sha1', `${key}&`).update(base).digest('base64');
    expect(verifyHmacSha1(base, key, encoded)).toBe(true);
    expect(verifyHmacSha1(base, key, raw)).toBe(false);
  });

  it('verifies RSA-SHA256 PKCS#1 v1.5 and refuses another key or a changed base', () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const base = 'POST&https%3A%2F%2Fa%2Fb&c%3Dd';
    const sig = sign('sha256', Buffer.from(base), privateKey).toString('base64');
    expect(verifyRsaSha256(base, publicKey, sig)).toBe(true);
    expect(verifyRsaSha256(base, other.publicKey, sig)).toBe(false);
    expect(verifyRsaSha256(`${base}x`, publicKey, sig)).toBe(false);
  });
});
