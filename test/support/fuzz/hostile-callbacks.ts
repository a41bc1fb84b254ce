/**
 * Hostile HTTP requests to callback-ingest for the fuzz suites: fast-check arbitraries of shapes,
 * built with a target payment at send time. Every case is forged or malformed: none may be
 * published as a verified callback, none may be answered 5xx (503 only with the broker down),
 * every answer is a 4xx with a JSON reason code (or the payer's 303 / error page on /return).
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { controlFor } from '../callback-control';

export const CALLBACK_CLASSES = [
  'forged-checksum',
  'replayed-control',
  'missing-fields',
  'huge-body',
  'bad-encoding',
  'wrong-content-type',
  'mixed-query-body',
  'header-injection',
  'unknown-endpoint',
  'odd-method',
] as const;
export type CallbackClass = (typeof CALLBACK_CLASSES)[number];

export interface HostileRequest {
  readonly class: CallbackClass;
  readonly label: string;
  readonly method: string;
  /** Path and query, already encoded as they go on the wire. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body?: Buffer;
  /** The payment the request names (a hint may be published for it; a callback never). */
  readonly paymentId: string;
}

export interface CallbackTarget {
  readonly endpointId: string;
  readonly controlKey: string;
  /** The payment the forged requests name (an in-flight one, or a fresh id). */
  readonly paymentId: string;
  readonly gatewayOrderId: string;
  /** Another payment whose genuine control is replayed. */
  readonly otherPaymentId: string;
  readonly otherGatewayOrderId: string;
}

type Shape = fc.Arbitrary<(t: CallbackTarget) => HostileRequest>;

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };
const STATUSES = ['approved', 'declined', 'filtered', 'error', 'processing', 'unknown'];

function params(t: CallbackTarget, status: string, control: string): Record<string, string> {
  return {
    status,
    orderid: t.gatewayOrderId,
    merchant_order: t.paymentId,
    client_orderid: t.paymentId,
    type: 'sale',
    amount: '10.00',
    currency: 'USD',
    control,
  };
}

const query = (p: Record<string, string>) => new URLSearchParams(p).toString();
const path = (t: CallbackTarget, p: Record<string, string>, endpoint = t.endpointId) =>
  `/callbacks/gateway/${endpoint}?${query(p)}`;

function make(
  cls: CallbackClass,
  label: string,
  request: (t: CallbackTarget) => Omit<HostileRequest, 'class' | 'label' | 'paymentId'>,
): (t: CallbackTarget) => HostileRequest {
  return (t) => ({ class: cls, label, paymentId: t.paymentId, ...request(t) });
}

const hex40 = fc.stringMatching(/^[0-9a-f]{40}$/);

const forgedChecksum: Shape = fc
  .tuple(
    fc.constantFrom(...STATUSES),
    fc.oneof(
      hex40,
      hex40.map((h) => h.toUpperCase()),
      fc.string({ maxLength: 80 }),
      fc.constant('0'.repeat(40)),
      fc.stringMatching(/^[0-9a-f]{39}$/),
      fc.stringMatching(/^[0-9a-f]{64}$/),
    ),
    fc.constantFrom('GET', 'POST'),
  )
  .map(([status, control, method]) =>
    make(
      'forged-checksum',
      `${method} ${status} with control ${JSON.stringify(control.slice(0, 12))}…`,
      (t) =>
        method === 'GET'
          ? { method, path: path(t, params(t, status, control)), headers: {} }
          : {
              method,
              path: `/callbacks/gateway/${t.endpointId}`,
              headers: FORM,
              body: Buffer.from(query(params(t, status, control))),
            },
    ),
  );

/** A genuine control of another order (or another status, or under another key) sent for ours. */
const replayedControl: Shape = fc
  .tuple(
    fc.constantFrom('other-order', 'other-status', 'swapped-orderid', 'other-key'),
    fc.constantFrom(...STATUSES),
  )
  .map(([how, status]) =>
    make('replayed-control', `${how}, ${status}`, (t) => {
      let control: string;
      let p: Record<string, string>;
      if (how === 'other-order') {
        control = controlFor(status, t.otherGatewayOrderId, t.otherPaymentId, t.controlKey);
        p = params(t, status, control);
      } else if (how === 'other-status') {
        control = controlFor(
          status === 'approved' ? 'declined' : 'approved',
          t.gatewayOrderId,
          t.paymentId,
          t.controlKey,
        );
        p = params(t, status, control);
      } else if (how === 'swapped-orderid') {
        // A genuine callback of the other payment, re-addressed to ours with its own orderid.
        control = controlFor(status, t.otherGatewayOrderId, t.otherPaymentId, t.controlKey);
        p = { ...params(t, status, control), orderid: t.otherGatewayOrderId };
      } else {
        control = controlFor(status, t.gatewayOrderId, t.paymentId, `${t.controlKey}-other`);
        p = params(t, status, control);
      }
      return { method: 'GET', path: path(t, p), headers: {} };
    }),
  );

const missingFields: Shape = fc
  .tuple(
    fc.subarray(['status', 'orderid', 'merchant_order', 'control'], { minLength: 1 }),
    fc.boolean(),
  )
  .map(([drop, empty]) =>
    make('missing-fields', `${drop.join('+')} ${empty ? 'empty' : 'absent'}`, (t) => {
      const p = params(
        t,
        'approved',
        controlFor('approved', t.gatewayOrderId, t.paymentId, '0'.repeat(16)),
      );
      for (const name of drop) {
        if (empty) p[name] = '';
        else delete p[name];
      }
      return { method: 'GET', path: path(t, p), headers: {} };
    }),
  );

const hugeBody: Shape = fc
  .tuple(fc.integer({ min: 17_000, max: 2_000_000 }), fc.constantFrom('form', 'declared-small'))
  .map(([bytes, how]) =>
    make('huge-body', `${bytes} bytes (${how})`, (t) => {
      const filler = `&pad=${'a'.repeat(bytes)}`;
      const body = Buffer.from(query(params(t, 'approved', '0'.repeat(40))) + filler);
      return {
        method: 'POST',
        path: `/callbacks/gateway/${t.endpointId}`,
        headers: how === 'form' ? FORM : { ...FORM, 'x-note': 'chunked' },
        body,
      };
    }),
  );

const badEncoding: Shape = fc
  .tuple(
    fc.constantFrom(
      Buffer.from([0xff, 0xfe, 0xfd]),
      Buffer.from([0xc3, 0x28]),
      Buffer.from([0xed, 0xa0, 0x80]),
      Buffer.from([0xf8, 0x88, 0x80, 0x80, 0x80]),
      Buffer.from('%ZZ%'),
      Buffer.from('%00'),
      Buffer.from('%ED%A0%80'),
    ),
    fc.constantFrom('body', 'query-raw'),
  )
  .map(([bytes, where]) =>
    make('bad-encoding', `${bytes.toString('hex')} in the ${where}`, (t) => {
      const base = query(params(t, 'approved', '0'.repeat(40)));
      if (where === 'body')
        return {
          method: 'POST',
          path: `/callbacks/gateway/${t.endpointId}`,
          headers: FORM,
          body: Buffer.concat([Buffer.from(`${base}&name=`), bytes]),
        };
      const escaped = [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');
      return {
        method: 'GET',
        path: `/callbacks/gateway/${t.endpointId}?${base}&name=${escaped}`,
        headers: {},
      };
    }),
  );

/** No content-type header at all for ''. */
function contentType(type: string): Record<string, string> {
  return type === '' ? {} : { 'content-type': type };
}

const wrongContentType: Shape = fc
  .constantFrom(
    'application/json',
    'text/plain',
    'multipart/form-data; boundary=x',
    'application/xml',
    'application/x-www-form-urlencoded; charset=latin1',
    '',
  )
  .map((type) =>
    make('wrong-content-type', `POST as ${JSON.stringify(type)}`, (t) => ({
      method: 'POST',
      path: `/callbacks/gateway/${t.endpointId}`,
      headers: contentType(type),
      body: Buffer.from(
        type.startsWith('application/json')
          ? JSON.stringify(params(t, 'approved', '0'.repeat(40)))
          : query(params(t, 'approved', '0'.repeat(40))),
      ),
    })),
  );

/** Query and body disagree: a genuine control in one, other values in the other. */
const mixedQueryBody: Shape = fc
  .constantFrom('status', 'merchant_order', 'orderid', 'control')
  .map((field) =>
    make('mixed-query-body', `${field} differs between query and body`, (t) => {
      const genuine = params(
        t,
        'declined',
        controlFor('declined', t.gatewayOrderId, t.paymentId, t.controlKey),
      );
      const other: Record<string, string> = {
        status: 'approved',
        merchant_order: t.otherPaymentId,
        orderid: t.otherGatewayOrderId,
        control: '0'.repeat(40),
      };
      return {
        method: 'POST',
        path: `/callbacks/gateway/${t.endpointId}?${query({ [field]: other[field] ?? '' })}`,
        headers: FORM,
        body: Buffer.from(query(genuine)),
      };
    }),
  );

/** CR/LF and friends in values; the header names fetch allows. */
const headerInjection: Shape = fc
  .tuple(
    fc.constantFrom(
      '%0d%0aSet-Cookie:%20x=1',
      '%0aLocation:%20https://evil.example',
      '%0d%0a%0d%0a<html>',
      '%E5%98%8A%E5%98%8DX-Injected:%201',
    ),
    fc.constantFrom('merchant_order', 'status', 'orderid', 'control'),
    fc.constantFrom('/callbacks/gateway', '/return'),
  )
  .map(([payload, field, route]) =>
    make('header-injection', `${payload} in ${field} on ${route}`, (t) => {
      const p = params(t, 'approved', '0'.repeat(40));
      const encoded = query(p).replace(
        `${field}=${encodeURIComponent(p[field] ?? '')}`,
        `${field}=${encodeURIComponent(p[field] ?? '')}${payload}`,
      );
      return {
        method: 'GET',
        path: `${route}/${t.endpointId}?${encoded}`,
        headers: { 'x-forwarded-host': 'evil.example', traceparent: '00-zz-yy-01' },
      };
    }),
  );

const unknownEndpoint: Shape = fc
  .oneof(
    fc
      .stringMatching(/^[0-9]{1,8}$/)
      .filter(
        (e) =>
          ![
            '1111',
            '1112',
            '1113',
            '1114',
            '1115',
            '1116',
            '1117',
            '1118',
            '2111',
            '1213',
          ].includes(e),
      ),
    fc.constantFrom(
      '..%2f..%2fetc%2fpasswd',
      '%00',
      'a'.repeat(300),
      '1111%0d%0a',
      '__proto__',
      'constructor',
    ),
  )
  .chain((endpoint) =>
    fc
      .constantFrom(
        `/callbacks/gateway/${endpoint}`,
        `/callbacks/${endpoint}`,
        `/${endpoint}`,
        `/callbacks/gateway/1111/${endpoint}`,
      )
      .map((route) =>
        make('unknown-endpoint', route.slice(0, 60), (t) => ({
          method: 'GET',
          path: `${route}?${query(params(t, 'approved', '0'.repeat(40)))}`,
          headers: {},
        })),
      ),
  );

const oddMethod: Shape = fc
  .constantFrom('PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD')
  .map((method) =>
    make('odd-method', `${method} on the callback route`, (t) => ({
      method,
      path: path(t, params(t, 'approved', '0'.repeat(40))),
      headers: method === 'HEAD' || method === 'OPTIONS' ? {} : FORM,
      ...(method === 'HEAD' || method === 'OPTIONS'
        ? {}
        : { body: Buffer.from('status=approved') }),
    })),
  );

export const CALLBACK_SHAPES: Record<CallbackClass, Shape> = {
  'forged-checksum': forgedChecksum,
  'replayed-control': replayedControl,
  'missing-fields': missingFields,
  'huge-body': hugeBody,
  'bad-encoding': badEncoding,
  'wrong-content-type': wrongContentType,
  'mixed-query-body': mixedQueryBody,
  'header-injection': headerInjection,
  'unknown-endpoint': unknownEndpoint,
  'odd-method': oddMethod,
};

/** `count` requests of every class (or the counts given) from `seed`, aimed at `target(i)`. */
export function hostileRequests(
  seed: number,
  counts: Partial<Record<CallbackClass, number>> | number,
  target: (i: number) => CallbackTarget,
): HostileRequest[] {
  const out: HostileRequest[] = [];
  CALLBACK_CLASSES.forEach((cls, i) => {
    const count = typeof counts === 'number' ? counts : (counts[cls] ?? 0);
    if (count <= 0) return;
    for (const make of fc.sample(CALLBACK_SHAPES[cls], { seed: seed + i, numRuns: count }))
      out.push(make(target(out.length)));
  });
  return out;
}

/** A target naming a fresh, unknown payment (no saga anywhere). */
export function freshTarget(endpointId: string, controlKey: string): CallbackTarget {
  return {
    endpointId,
    controlKey,
    paymentId: randomUUID(),
    gatewayOrderId: String(100_000 + Math.floor(Math.random() * 899_999)),
    otherPaymentId: randomUUID(),
    otherGatewayOrderId: String(100_000 + Math.floor(Math.random() * 899_999)),
  };
}

export interface HttpAnswer {
  readonly status: number;
  readonly code?: string;
  readonly text: string;
  readonly headers: Headers;
}

/** Sends one request as is (node fetch; a body over the limit may be cut off by the server). */
export async function sendHostile(base: string, r: HostileRequest): Promise<HttpAnswer> {
  const res = await fetch(`${base}${r.path}`, {
    method: r.method,
    headers: r.headers,
    redirect: 'manual',
    ...(r.body === undefined ? {} : { body: r.body }),
  }).catch((error: unknown) => ({ failed: String(error) }));
  if ('failed' in res) return { status: 0, text: res.failed, headers: new Headers() };
  const text = await res.text().catch(() => '');
  let code: string | undefined;
  try {
    code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
  } catch {
    code = undefined;
  }
  return {
    status: res.status,
    text,
    headers: res.headers,
    ...(code === undefined ? {} : { code }),
  };
}

/** What is wrong with an answer (empty = fine): no 5xx, a 4xx with a reason, or the payer's 303. */
export function answerViolations(r: HostileRequest, a: HttpAnswer): string[] {
  const name = `${r.class} (${r.label}: ${r.method} ${r.path.slice(0, 80)})`;
  const out: string[] = [];
  const isReturn = r.path.startsWith('/return/');
  if (a.status === 0) out.push(`${name}: connection failed (${a.text.slice(0, 80)})`);
  else if (a.status >= 500) out.push(`${name}: answered ${a.status}`);
  else if (a.status === 200) out.push(`${name}: answered 200 to a forged or malformed request`);
  else if (isReturn && (a.status === 303 || (a.status >= 400 && a.status < 500))) {
    // The payer goes on (303, marked unverified) or sees a plain error page.
  } else if (a.status >= 400 && a.status < 500) {
    if (r.method !== 'HEAD' && a.code === undefined)
      out.push(`${name}: ${a.status} without a JSON reason code`);
  } else out.push(`${name}: answered ${a.status}`);
  for (const [header, value] of a.headers) {
    if (/set-cookie|x-injected/i.test(header) || /evil\.example/.test(value))
      out.push(`${name}: injected header ${header}`);
  }
  if (/\n\s+at .+\(.+:\d+:\d+\)/.test(a.text)) out.push(`${name}: a stack trace in the answer`);
  return out;
}
