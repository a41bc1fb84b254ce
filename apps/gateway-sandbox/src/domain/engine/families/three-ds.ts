import { Fields, Refusal, opt, req } from '../../fields';
import { formatMinor } from '../../money';
import { THREEDS_FAILED } from '../../outcomes';
import { acsChallengePage, autoPostPage, messagePage } from '../../pages';
import { EngineRequest, Order, PageResult, Reply, ThreeDS } from '../model';
import { OrderStore } from '../order-store';
import { envelope, html } from '../replies';
import { returnToMerchant } from './hosted-forms';

/**
 * 3-D Secure: the method URL step and its result upload, the challenge page (the sandbox's ACS),
 * and the CRes / PaRes uploads of integrations that run their own 3-D Secure server.
 */

export function uploadMethodResult(s: OrderStore, r: EngineRequest): Reply {
  const order = s.referenced(r);
  const tds = pendingThreeDS(order);
  const ind = req(r.fields, 'threeDSCompInd', 1);
  if (ind !== 'Y' && ind !== 'N' && ind !== 'U')
    throw new Refusal('threeDSCompInd must be Y, N or U');
  const trans = opt(r.fields, 'threeDSServerTransID');
  if (trans !== undefined && trans !== tds.serverTransId) {
    throw new Refusal('threeDSServerTransID does not match the transaction');
  }
  if (tds.stage !== 'method' && tds.stage !== 'challenge') {
    throw new Refusal('the 3-D Secure method step is already over');
  }
  tds.compInd = ind;
  tds.stage = 'challenge';
  return envelope('async-response', order, s.last(order));
}

export function uploadCres(s: OrderStore, r: EngineRequest): Reply {
  const order = s.referenced(r);
  const tds = pendingThreeDS(order);
  const raw = req(r.fields, 'cRes', 4096, 'cres');
  const decoded = decodeBase64Json(raw);
  if (!decoded || decoded.messageType !== 'CRes') {
    throw new Refusal('cRes is not a Base64-encoded CRes message');
  }
  if (decoded.threeDSServerTransID !== tds.serverTransId) {
    throw new Refusal('cRes belongs to another 3-D Secure transaction');
  }
  const passed = decoded.transStatus === 'Y';
  completeChallenge(s, order, passed);
  return envelope('async-response', order, s.last(order));
}

export function uploadPares(s: OrderStore, r: EngineRequest): Reply {
  const order = s.referenced(r);
  const tds = pendingThreeDS(order);
  const raw = req(r.fields, 'PaRes', 16384, 'pares', 'paRes');
  const text = decodeBase64Text(raw);
  const xid = text === undefined ? undefined : /<xid>([^<]*)<\/xid>/.exec(text)?.[1];
  const status = text === undefined ? undefined : /<status>([YNAU])<\/status>/.exec(text)?.[1];
  if (xid === undefined || status === undefined) throw new Refusal('PaRes is not readable');
  if (xid !== tds.serverTransId) throw new Refusal('PaRes belongs to another transaction');
  completeChallenge(s, order, status === 'Y' || status === 'A');
  return envelope('async-response', order, s.last(order));
}

export function methodPage(s: OrderStore, token: string): PageResult {
  const order = s.byToken.get(token);
  if (!order?.threeDS) return html(404, messagePage('Not found', 'Unknown 3DS method.'));
  return html(200, messagePage('3DS method', 'Browser fingerprint collected.'));
}

export function acsPage(s: OrderStore, token: string, acsPassword: string): PageResult {
  const session = openAcsSession(s, token);
  return 'kind' in session ? session : html(200, challengeForm(session.order, acsPassword));
}

export function acsSubmit(
  s: OrderStore,
  token: string,
  fields: Fields,
  acsPassword: string,
): PageResult {
  const session = openAcsSession(s, token);
  if ('kind' in session) return session;
  const { order, tds } = session;
  const cancelled = fields.get('action') === 'cancel';
  const password = fields.get('password') ?? '';
  if (!cancelled && password !== acsPassword && password === '') {
    return html(400, challengeForm(order, acsPassword, 'Enter the password.'));
  }
  const passed = !cancelled && password === acsPassword;
  if (order.endpoint.threeDSResult === 'upload') {
    tds.stage = 'awaiting-upload';
    tds.passed = passed;
    return html(200, handBackForUpload(order, tds, passed));
  }
  completeChallenge(s, order, passed);
  return html(200, returnToMerchant(order, s.last(order)));
}

/** The order behind a 3-D Secure challenge still open, or the page that says why not. */
function openAcsSession(s: OrderStore, token: string): { order: Order; tds: ThreeDS } | PageResult {
  const order = s.byToken.get(token);
  const tds = order?.threeDS;
  if (!order || !tds) return html(404, messagePage('Not found', 'Unknown 3-D Secure session.'));
  if (tds.stage !== 'challenge' && tds.stage !== 'method') {
    return html(409, messagePage('Finished', 'This 3-D Secure session is already finished.'));
  }
  return { order, tds };
}

function completeChallenge(s: OrderStore, order: Order, passed: boolean): void {
  const tds = order.threeDS;
  if (!tds) return;
  tds.stage = 'done';
  tds.passed = passed;
  const op = s.last(order);
  s.finish(
    order,
    op,
    passed ? { status: 'approved', verified3d: 'AUTHENTICATED' } : THREEDS_FAILED,
  );
}

function pendingThreeDS(order: Order): ThreeDS {
  const tds = order.threeDS;
  if (!tds || tds.stage === 'done') {
    throw new Refusal('no 3-D Secure authentication is pending for this order');
  }
  return tds;
}

function challengeForm(order: Order, acsPassword: string, error?: string): string {
  const tds = order.threeDS;
  return acsChallengePage({
    action: `${order.baseUrl}/acs/${tds?.token ?? ''}/submit`,
    merchantOrder: order.clientOrderId,
    amount: formatMinor(order.amountMinor, order.currency, order.endpoint.amountExponent),
    currency: order.currency,
    lastFour: order.card?.lastFour ?? '',
    hint: acsPassword,
    error,
  });
}

/** Own-3DS integrations: the ACS hands the CRes / PaRes to the merchant, who uploads it. */
function handBackForUpload(order: Order, tds: ThreeDS, passed: boolean): string {
  const target = order.redirectUrl;
  if (!target) return messagePage('Finished', 'Challenge finished.');
  if (order.endpoint.threeDSProtocol === '1.0.2') {
    const pares = `<PARes><Purchase><xid>${tds.serverTransId}</xid></Purchase><TX><status>${passed ? 'Y' : 'N'}</status></TX></PARes>`;
    return autoPostPage('Returning to the merchant', target, {
      PaRes: Buffer.from(pares).toString('base64'),
      MD: order.orderId,
      orderid: order.orderId,
      merchant_order: order.clientOrderId,
    });
  }
  const cres = {
    messageType: 'CRes',
    messageVersion: '2.2.0',
    threeDSServerTransID: tds.serverTransId,
    acsTransID: tds.acsTransId,
    transStatus: passed ? 'Y' : 'N',
  };
  return autoPostPage('Returning to the merchant', target, {
    cres: Buffer.from(JSON.stringify(cres)).toString('base64'),
    orderid: order.orderId,
    merchant_order: order.clientOrderId,
  });
}

function decodeBase64Json(text: string): Record<string, unknown> | undefined {
  const decoded = decodeBase64Text(text);
  if (decoded === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(decoded);
    return value !== null && typeof value === 'object'
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function decodeBase64Text(text: string): string | undefined {
  const normalized = text.replace(/-/g, '+').replace(/_/g, '/').replace(/\s/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(normalized) || normalized.length === 0) return undefined;
  return Buffer.from(normalized, 'base64').toString('utf8');
}
