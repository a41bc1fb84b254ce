/**
 * Interop: the sandbox's OAuth 1.0a HMAC-SHA1 verifier accepts requests signed by an independent
 * implementation, Python's oauthlib (test/support/oauthlib.ts), over real HTTP. Merchants get
 * random control keys with reserved and non-ASCII characters; each request is a valid v2 payout
 * plus random extra form parameters (repeated names included), body and Authorization header
 * exactly as oauthlib renders them (its nonce and current timestamp). The RFC 5849 §3.4.2 key is
 * percent-encode(control key) + "&": a verbatim key fails every case where encoding changes it.
 */
import fc from 'fast-check';
import {
  keyNeedsEncoding,
  oauthKeyArb,
  oauthParamsArb,
  oauthlibSign,
  oauthlibVersion,
} from '../../../test/support/oauthlib';
import { Running, post, startSandbox, uniqueId } from './harness';

const RUNS = 200;
const FIRST_ENDPOINT = 9000;

const payoutFields = (): Array<[string, string]> => [
  ['client_orderid', uniqueId('oauthlib')],
  ['amount', '15.00'],
  ['currency', 'USD'],
  ['order_desc', 'Payout test'],
  ['credit_card_number', '4444333322221111'],
  ['card_printed_name', 'JOHN SMITH'],
  ['expire_month', '12'],
  ['expire_year', '2099'],
];
const FIELD_NAMES = payoutFields().map(([n]) => n);

describe('gateway sandbox: OAuth HMAC-SHA1 verifier vs oauthlib-signed requests', () => {
  const seed = Date.now();
  // The sandbox requires control keys of at least 8 characters.
  const samples = fc.sample(
    fc.record({ key: oauthKeyArb(8), extra: oauthParamsArb(FIELD_NAMES) }),
    { numRuns: RUNS, seed },
  );
  const login = (i: number) => `oauthlib-${i}`;
  let s: Running;

  beforeAll(async () => {
    s = await startSandbox(
      {},
      {
        merchants: samples.map((c, i) => ({
          login: login(i),
          controlKey: c.key,
          endpoints: [{ id: FIRST_ENDPOINT + i, currency: 'USD' }],
        })),
      },
    );
  });
  afterAll(async () => {
    await s.close();
  });

  it('oauthlib is installed (python3-oauthlib)', () => {
    expect(oauthlibVersion()).toMatch(/^\d+\.\d+/);
  });

  it(`accepts ${RUNS} oauthlib-signed payouts with random keys and parameters`, async () => {
    const url = (i: number) => `${s.url}/paynet/api/v2/payout/${FIRST_ENDPOINT + i}`;
    const signed = oauthlibSign(
      samples.map((c, i) => ({
        url: url(i),
        consumerKey: login(i),
        secret: c.key,
        params: [...payoutFields(), ...c.extra],
      })),
    );
    const refused: string[] = [];
    for (const [i, req] of signed.entries()) {
      const reply = await post(url(i), req.body, { authorization: req.authorization });
      if (reply.status !== 200 || reply.json?.type !== 'async-response') {
        refused.push(`#${i} key ${JSON.stringify(samples[i].key)}: ${reply.status} ${reply.text}`);
      }
    }
    expect({ seed, refused }).toEqual({ seed, refused: [] });
    expect(samples.some((c) => keyNeedsEncoding(c.key))).toBe(true);
  });

  it('refuses an oauthlib-signed payout whose body was changed after signing', async () => {
    const i = samples.findIndex((c) => keyNeedsEncoding(c.key));
    const url = `${s.url}/paynet/api/v2/payout/${FIRST_ENDPOINT + i}`;
    const [req] = oauthlibSign([
      { url, consumerKey: login(i), secret: samples[i].key, params: payoutFields() },
    ]);
    const reply = await post(url, req.body.replace('amount=15.00', 'amount=16.00'), {
      authorization: req.authorization,
    });
    expect(reply.status).toBe(401);
    expect(reply.text).toBe('invalid signature: signature does not verify');
  });
});
