/**
 * Benchmark for libs/payment-gateway. Run: `npm run bench:gateway`
 * (= `npx tsx bench/payment-gateway.bench.ts`). Bounded: about 20 s in total.
 *
 * 1. Signatures per second for each scheme: SHA-1 `control`, OAuth HMAC-SHA1, OAuth RSA-SHA256
 *    (the OAuth figures include parameter gathering, encoding, sorting and the base string).
 * 2. Requests per second through the client vs raw undici with the same Pool settings, against
 *    the same local node:http server (127.0.0.1, in-process), printed as a ratio.
 */
import { generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import {
  DEFAULT_TRANSPORT,
  PaymentGatewayClient,
  controlChecksum,
  hmacSha1Signer,
  poolOptions,
  rsaSha256Signer,
  signOAuthRequest,
} from '@payments/payment-gateway';
import { oauth10aReferenceSign } from '../libs/payment-gateway/test/support';

const SIGN_MS = 1500;
const HTTP_MS = 4000;
const CONCURRENCY = 32;

function opsPerSec(durationMs: number, fn: () => void): number {
  const end = performance.now() + durationMs;
  let n = 0;
  const start = performance.now();
  while (performance.now() < end) {
    for (let i = 0; i < 50; i++) fn();
    n += 50;
  }
  return n / ((performance.now() - start) / 1000);
}

async function reqPerSec(durationMs: number, one: () => Promise<void>): Promise<number> {
  const end = performance.now() + durationMs;
  let n = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < end) {
        await one();
        n++;
      }
    }),
  );
  return n / ((performance.now() - start) / 1000);
}

const fmt = (x: number) => Math.round(x).toLocaleString('en-US');

async function main(): Promise<void> {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const params = {
    client_orderid: 'order-123456',
    amount: '10.42',
    currency: 'USD',
    order_desc: 'Order 123456 with spaces & symbols',
    ipaddress: '203.0.113.7',
  };
  const url = 'https://gate.example.com/paynet/api/v4/payout/1234';
  const hmac = hmacSha1Signer('B17F59B4-A7DC-41B4-8FF9-37D986B43D20');
  const rsa = rsaSha256Signer(privateKey);
  let nonce = 0;
  const sign = (signer: typeof hmac) => () => {
    signOAuthRequest({
      url,
      params,
      consumerKey: 'merchant',
      signer,
      timestampSeconds: 1_700_000_000,
      nonce: String(nonce++),
    });
  };

  // A sale's body: 17 fields, several with reserved characters (the target: ≥ 100 k/s).
  const saleParams = {
    ...params,
    address1: '100 Main st',
    city: 'Seattle',
    zip_code: '98102',
    country: 'US',
    phone: '+12063582043',
    email: 'john.smith@example.com',
    credit_card_number: '4538977399606732',
    cvv2: '123',
    expire_month: '12',
    expire_year: '2099',
    card_printed_name: 'CARD HOLDER',
    redirect_url: 'https://shop.example.com/return?x=1',
  };
  const signWith = (how: typeof signOAuthRequest, body: typeof params) => () => {
    how({
      url,
      params: body,
      consumerKey: 'merchant',
      signer: hmac,
      timestampSeconds: 1_700_000_000,
      nonce: String(nonce++),
    });
  };

  const control = opsPerSec(SIGN_MS, () => {
    controlChecksum(['1234', 'order-123456', '1042', 'john@example.com'], 'key');
  });
  // Side by side, alternating: our RFC 5849 code and the oauth-1.0a path it replaced.
  const rounds = [0, 1].map(() => ({
    ours: opsPerSec(SIGN_MS / 2, signWith(signOAuthRequest, params)),
    former: opsPerSec(
      SIGN_MS / 2,
      signWith(oauth10aReferenceSign as typeof signOAuthRequest, params),
    ),
    oursSale: opsPerSec(SIGN_MS / 2, signWith(signOAuthRequest, saleParams)),
    formerSale: opsPerSec(
      SIGN_MS / 2,
      signWith(oauth10aReferenceSign as typeof signOAuthRequest, saleParams),
    ),
  }));
  const best = (k: keyof (typeof rounds)[number]) => Math.max(...rounds.map((r) => r[k]));
  const hmacRate = best('ours');
  const rsaRate = opsPerSec(SIGN_MS * 2, sign(rsa));
  console.log('signatures per second (single core):');
  console.log(`  control (SHA-1)      ${fmt(control)}`);
  console.log(
    `  OAuth HMAC-SHA1      ${fmt(hmacRate)}   (5 fields; via oauth-1.0a: ${fmt(best('former'))}, x${(hmacRate / best('former')).toFixed(1)})`,
  );
  console.log(
    `  OAuth HMAC-SHA1      ${fmt(best('oursSale'))}   (a sale's 17 fields; via oauth-1.0a: ${fmt(best('formerSale'))}, x${(best('oursSale') / best('formerSale')).toFixed(1)})`,
  );
  console.log(`  OAuth RSA-SHA256     ${fmt(rsaRate)}   (2048-bit key)`);

  const reply = JSON.stringify({
    type: 'status-response',
    status: 'approved',
    amount: '10.42',
    currency: 'USD',
    'paynet-order-id': '6768788',
    'merchant-order-id': 'order-123456',
    'serial-number': '00000000-0000-0000-0000-000002d9b22a',
  });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/vnd.pay+json; charset=utf-8' });
      res.end(reply);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;

  const client = new PaymentGatewayClient({
    baseUrl: `${origin}/paynet`,
    endpoint: { endpointId: '1234' },
    login: 'merchant',
    controlKey: 'B17F59B4-A7DC-41B4-8FF9-37D986B43D20',
  });
  const pool = new Pool(origin, poolOptions(DEFAULT_TRANSPORT));
  const body =
    'login=merchant&client_orderid=order-123456&control=0000000000000000000000000000000000000000';
  let failures = 0;

  const raw = async () => {
    const res = await pool.request({
      method: 'POST',
      path: '/paynet/api/v2/status/1234',
      headers: {
        accept: 'application/vnd.pay+json',
        'content-type': 'application/x-www-form-urlencoded',
      },
      body,
    });
    JSON.parse(await res.body.text());
  };
  const viaClient = async () => {
    const r = await client.call('v2/status', { client_orderid: 'order-123456' });
    if (r.outcome !== 'accepted') failures++;
  };
  // warm-up both paths
  await reqPerSec(300, raw);
  await reqPerSec(300, viaClient);
  // Interleave short rounds so that load from other processes hits both paths alike, each path
  // first in every other round (the path that runs second pays for the garbage and the
  // connection state the first one left behind).
  const ROUNDS = 8;
  let rawSum = 0;
  let clientSum = 0;
  for (let i = 0; i < ROUNDS; i++) {
    if (i % 2 === 0) {
      rawSum += await reqPerSec(HTTP_MS / ROUNDS, raw);
      clientSum += await reqPerSec(HTTP_MS / ROUNDS, viaClient);
    } else {
      clientSum += await reqPerSec(HTTP_MS / ROUNDS, viaClient);
      rawSum += await reqPerSec(HTTP_MS / ROUNDS, raw);
    }
  }
  const rawRate = rawSum / ROUNDS;
  const clientRate = clientSum / ROUNDS;
  console.log(
    `requests per second (local node:http, ${CONCURRENCY} in flight, ${DEFAULT_TRANSPORT.connections} connections):`,
  );
  console.log(`  raw undici Pool      ${fmt(rawRate)}`);
  console.log(`  client (v2/status)   ${fmt(clientRate)}   (sign + validate + parse + classify)`);
  console.log(`  ratio client/raw     ${(clientRate / rawRate).toFixed(2)}`);
  if (failures > 0) console.log(`  WARNING: ${failures} client calls not accepted`);

  await client.close();
  await pool.close();
  await new Promise<void>((r) => server.close(() => r()));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
