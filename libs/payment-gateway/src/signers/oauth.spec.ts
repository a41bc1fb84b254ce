import { createHmac, generateKeyPairSync, verify, constants } from 'node:crypto';
import fc from 'fast-check';
import OAuth from 'oauth-1.0a';
import { compareBytes, normalizeParameters, percentDecode, percentEncode } from '../encoding';
import { oauth10aReferenceSign, parseOAuthHeader, refEncode, vector } from '../../test/support';
import { hmacSha1Signer, randomNonce, rsaSha256Signer, signOAuthRequest } from './oauth';

/** The library as the signer uses it (constructed the same way). */
const lib = new OAuth({
  consumer: { key: 'merchant', secret: '' },
  signature_method: 'HMAC-SHA1',
  hash_function: () => '',
});

const UNRESERVED_OR_PCT = /^(?:[A-Za-z0-9\-._~]|%[0-9A-F]{2})*$/;

const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

describe('RFC 3986 encoding (vector oauth-rfc3986-encode)', () => {
  const v = vector('oauth-rfc3986-encode');
  const values = (v.inputs as { values: string[] }).values;
  const expected = (v.expected as { encoded: string[] }).encoded;

  it.each(values.map((value, i) => [value, expected[i]]))('%s → %s', (value, enc) => {
    expect(percentEncode(value)).toBe(enc);
    expect(lib.percentEncode(value)).toBe(enc);
    expect(refEncode(value)).toBe(enc);
  });

  it('space is %20 and + is %2B, never the other way round', () => {
    expect(lib.percentEncode('a b+c')).toBe('a%20b%2Bc');
  });
});

describe('RFC 3986 encoding properties (oauth-1.0a vs independent byte-wise encoder)', () => {
  const anyString = fc.string({ unit: 'binary', maxLength: 40 });

  it('decode(encode(s)) == s for arbitrary unicode', () => {
    fc.assert(
      fc.property(anyString, (s) => {
        expect(percentDecode(lib.percentEncode(s))).toBe(s);
      }),
      { numRuns: 500 },
    );
  });

  it('oauth-1.0a encoding equals the byte-wise reference and only emits unreserved / %XX', () => {
    fc.assert(
      fc.property(anyString, (s) => {
        const enc = lib.percentEncode(s);
        expect(enc).toBe(refEncode(s));
        expect(enc).toBe(percentEncode(s));
        expect(UNRESERVED_OR_PCT.test(enc)).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses lone surrogates (cannot be UTF-8 encoded) instead of mangling them', () => {
    expect(() => percentEncode('a\uD800b')).toThrow(TypeError);
  });
});

describe('parameter normalisation and sorting', () => {
  it('vector oauth-normalize-params', () => {
    const v = vector('oauth-normalize-params');
    const params = (v.inputs as { params: Record<string, string> }).params;
    const expected = (v.expected as { normalized: string }).normalized;
    expect(normalizeParameters(params)).toBe(expected);
    const { oauth_consumer_key, ...data } = params;
    expect(
      lib.getParameterString({ url: 'https://x.example/', method: 'POST', data }, {
        oauth_consumer_key,
      } as unknown as OAuth.Data),
    ).toBe(expected);
  });

  it('vector oauth-base-string-hf (method "post" is upper-cased)', () => {
    const v = vector('oauth-base-string-hf');
    const inp = v.inputs as { method: string; url: string; params: Record<string, string> };
    const { oauth_consumer_key, ...data } = inp.params;
    expect(
      lib.getBaseString({ url: inp.url, method: inp.method, data }, {
        oauth_consumer_key,
      } as unknown as OAuth.Data),
    ).toBe((v.expected as { base_string: string }).base_string);
  });

  const key = fc
    .string({ unit: 'binary', minLength: 1, maxLength: 12 })
    .filter((k) => !['__proto__', 'constructor'].includes(k) && !k.startsWith('oauth_'));
  const dict = fc.dictionary(key, fc.string({ unit: 'binary', maxLength: 12 }), { maxKeys: 8 });

  it('oauth-1.0a sorts encoded names in Buffer.compare (byte) order, equal to ours', () => {
    fc.assert(
      fc.property(dict, (params) => {
        const s = lib.getParameterString(
          { url: 'https://x.example/', method: 'POST', data: { ...params } },
          {} as unknown as OAuth.Data,
        );
        expect(s).toBe(normalizeParameters(params));
        const names = s === '' ? [] : s.split('&').map((p) => p.split('=')[0]);
        const sorted = [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
        expect(names).toEqual(sorted);
      }),
      { numRuns: 300 },
    );
  });

  it('byte order is not raw order: "." sorts after "/" once "/" is encoded as %2F', () => {
    expect(normalizeParameters({ '.': '1', '/': '2' })).toBe('%2F=2&.=1');
    expect(compareBytes('%2F', '.')).toBeLessThan(0);
  });

  it('empty values take part as "name="', () => {
    expect(normalizeParameters({ card_printed_name: '', a: 'x' })).toBe('a=x&card_printed_name=');
    expect(
      lib.getParameterString(
        { url: 'https://x.example/', method: 'POST', data: { card_printed_name: '', a: 'x' } },
        {} as unknown as OAuth.Data,
      ),
    ).toBe('a=x&card_printed_name=');
  });

  it('the base string parameter section round-trips to the signed parameters (double encoding)', () => {
    fc.assert(
      fc.property(dict, (params) => {
        const out = signOAuthRequest({
          url: 'https://gate.example/paynet/api/v4/transfer/1',
          params,
          consumerKey: 'm',
          signer: hmacSha1Signer('k'),
          timestampSeconds: 1669966913,
          nonce: 'n',
        });
        const [method, encUrl, encParams, ...rest] = out.baseString.split('&');
        expect(rest).toEqual([]);
        expect(method).toBe('POST');
        expect(percentDecode(encUrl)).toBe('https://gate.example/paynet/api/v4/transfer/1');
        const decoded: Record<string, string> = {};
        for (const pair of percentDecode(encParams).split('&')) {
          const [k, v] = pair.split('=');
          decoded[percentDecode(k)] = percentDecode(v);
        }
        const { oauth_signature: _sig, ...oauthNoSig } = out.oauthParams;
        expect(decoded).toEqual({ ...params, ...oauthNoSig });
      }),
      { numRuns: 200 },
    );
  });
});

describe('signOAuthRequest', () => {
  const url = 'https://pay.billblend.com/paynet/api/v2/pan-eligibility/send/ENDPOINTID';
  const params = { 'client-order-id': '1234567890', 'sending-card-ref-id': '7654321' };

  it('reproduces the published HMAC-SHA1 parameter string and base-string prefix (facts §2.2)', () => {
    const out = signOAuthRequest({
      url,
      params,
      consumerKey: 'merchantlogin',
      signer: hmacSha1Signer('F9F65098-1111-1111-1111-621611111111'),
      timestampSeconds: 1669966913,
      nonce: 'y3qlvMPky7g',
    });
    const paramString =
      'client-order-id=1234567890&oauth_consumer_key=merchantlogin&oauth_nonce=y3qlvMPky7g&oauth_signature_method=HMAC-SHA1&oauth_timestamp=1669966913&oauth_version=1.0&sending-card-ref-id=7654321';
    expect(out.baseString).toBe(`POST&${refEncode(url)}&${refEncode(paramString)}`);
    expect(
      out.baseString.startsWith(
        'POST&https%3A%2F%2Fpay.billblend.com%2Fpaynet%2Fapi%2Fv2%2Fpan-eligibility%2Fsend%2FENDPOINTID&client-order-id%3D1234567890%26oauth_consumer_key%3Dmerchantlogin%26oauth_nonce%3Dy3qlvMPky7g%26oauth_signature_method%3DHMAC-SHA1%26oauth_',
      ),
    ).toBe(true);
    // Independent HMAC over the base string with key = control key + "&".
    const expected = createHmac('sha1', 'F9F65098-1111-1111-1111-621611111111&')
      .update(out.baseString)
      .digest('base64');
    expect(out.oauthParams.oauth_signature).toBe(expected);
    const header = parseOAuthHeader(out.authorization);
    expect(header).toEqual({
      oauth_consumer_key: 'merchantlogin',
      oauth_nonce: 'y3qlvMPky7g',
      oauth_signature_method: 'HMAC-SHA1',
      oauth_timestamp: '1669966913',
      oauth_version: '1.0',
      oauth_signature: expected,
    });
    expect(Object.keys(header).some((k) => k in params)).toBe(false);
  });

  it('header values are percent-encoded: the signature has no raw + / =', () => {
    for (let i = 0; i < 20; i++) {
      const out = signOAuthRequest({
        url,
        params: { a: String(i) },
        consumerKey: 'm',
        signer: rsaSha256Signer(privateKey),
        timestampSeconds: 1,
        nonce: randomNonce(),
      });
      const raw = /oauth_signature="([^"]*)"/.exec(out.authorization)![1];
      expect(raw).toMatch(UNRESERVED_OR_PCT);
      expect(decodeURIComponent(raw)).toBe(out.oauthParams.oauth_signature);
    }
  });

  it('HMAC key is percent-encode(control key) + "&" (RFC 5849 §3.4.2), not the key verbatim', () => {
    const out = signOAuthRequest({
      url,
      params,
      consumerKey: 'm',
      signer: hmacSha1Signer('a&b c/é'),
      timestampSeconds: 1,
      nonce: 'n',
    });
    const encoded = createHmac('sha1', 'a%26b%20c%2F%C3%A9&')
      .update(out.baseString)
      .digest('base64');
    const verbatim = createHmac('sha1', 'a&b c/é&').update(out.baseString).digest('base64');
    expect(out.oauthParams.oauth_signature).toBe(encoded);
    expect(out.oauthParams.oauth_signature).not.toBe(verbatim);
  });

  it('repeated parameter names are all signed, sorted by name then value (RFC 5849 §3.4.1.3.2)', () => {
    const out = signOAuthRequest({
      url,
      params: [
        ['a', '2'],
        ['b', 'x y'],
        ['a', '1'],
        ['a', '10'],
        ['a', ''],
      ],
      consumerKey: 'm',
      signer: hmacSha1Signer('k'),
      timestampSeconds: 7,
      nonce: 'n',
    });
    const paramString =
      'a=&a=1&a=10&a=2&b=x%20y&oauth_consumer_key=m&oauth_nonce=n&oauth_signature_method=HMAC-SHA1&oauth_timestamp=7&oauth_version=1.0';
    expect(out.baseString).toBe(`POST&${refEncode(url)}&${refEncode(paramString)}`);
    expect(
      normalizeParameters([
        ['a', '2'],
        ['b', 'x y'],
        ['a', '1'],
        ['a', '10'],
        ['a', ''],
      ]),
    ).toBe('a=&a=1&a=10&a=2&b=x%20y');
  });

  it('equals oauth-1.0a (the reference it replaced): same base string, signature and header for any parameters', () => {
    const name = fc
      .stringMatching(/^[a-z_][a-z0-9_.~ -]{0,12}$/)
      .filter((n) => !n.startsWith('oauth_'));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(name, fc.string({ unit: 'grapheme', maxLength: 20 })), { maxLength: 12 }),
        fc.stringMatching(/^[0-9a-f]{8,32}$/),
        fc.integer({ min: 0, max: 2 ** 31 }),
        (pairs, nonce, timestamp) => {
          const input = {
            url,
            params: pairs,
            consumerKey: 'login name',
            signer: hmacSha1Signer('control-key/with+reserved'),
            timestampSeconds: timestamp,
            nonce,
          };
          const ours = signOAuthRequest(input);
          const ref = oauth10aReferenceSign(input);
          expect(ours.baseString).toBe(ref.baseString);
          expect(ours.authorization).toBe(ref.authorization);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('a record and the same pairs sign identically', () => {
    const sign = (p: Record<string, string> | Array<[string, string]>) =>
      signOAuthRequest({
        url,
        params: p,
        consumerKey: 'm',
        signer: hmacSha1Signer('k'),
        timestampSeconds: 7,
        nonce: 'n',
      }).baseString;
    expect(sign(params)).toBe(sign(Object.entries(params)));
  });

  it('RSA-SHA256 signature verifies with crypto.verify (PKCS#1 v1.5, SHA-256)', () => {
    const out = signOAuthRequest({
      url: 'https://gate.example/paynet/api/v4/payout/7',
      params: { 'client-order-id': 'é 1+2', amount: '10.00' },
      consumerKey: 'TestMerchant',
      signer: rsaSha256Signer(privateKey),
      timestampSeconds: 1700000000,
      nonce: 'abc',
    });
    expect(out.oauthParams.oauth_signature_method).toBe('RSA-SHA256');
    const sig = Buffer.from(parseOAuthHeader(out.authorization).oauth_signature, 'base64');
    const ok = verify(
      'sha256',
      Buffer.from(out.baseString, 'utf8'),
      { key: publicKey, padding: constants.RSA_PKCS1_PADDING },
      sig,
    );
    expect(ok).toBe(true);
    expect(verify('sha256', Buffer.from(out.baseString + 'x'), publicKey, sig)).toBe(false);
  });

  it('refuses body fields named oauth_* (also as pairs) and __proto__', () => {
    const attempt = (p: Array<[string, string]>) => () =>
      signOAuthRequest({
        url,
        params: p,
        consumerKey: 'm',
        signer: hmacSha1Signer('k'),
        timestampSeconds: 1,
        nonce: 'n',
      });
    expect(attempt([['oauth_token', 'x']])).toThrow(/oauth_token is reserved/);
    expect(
      attempt([
        ['a', '1'],
        ['oauth_nonce', 'x'],
      ]),
    ).toThrow(/oauth_nonce is reserved/);
    expect(attempt([['__proto__', 'x']])).toThrow(/__proto__ is reserved/);
  });

  it('nonces are random, 32 hex chars and unique', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const n = randomNonce();
      expect(n).toMatch(/^[0-9a-f]{32}$/);
      seen.add(n);
    }
    expect(seen.size).toBe(2000);
  });
});
