import { Fields, clientOrderIdOf } from '../fields';
import { formatMinor } from '../money';
import { Status } from '../outcomes';
import { autoPostFragment } from '../pages';
import { Operation, Order, PageResult, Reply, ThreeDS } from './model';

/** The reply bodies the engine builds from an order's state, shared by every operation family. */

/** The head of every reply about an operation: which request, which order, which endpoint. */
export function envelope(type: string, order: Order, op: Operation): Reply {
  return {
    type,
    'serial-number': op.serial,
    'merchant-order-id': order.clientOrderId,
    'paynet-order-id': order.orderId,
    'end-point-id': order.endpointRef,
  };
}

export function validationError(
  message: string,
  code: number,
  fields: Fields,
  serialNumber: string,
): Reply {
  const body: Reply = {
    type: 'validation-error',
    'serial-number': serialNumber,
    'error-message': message,
    'error-code': code,
  };
  const clientOrderId = clientOrderIdOf(fields);
  if (clientOrderId !== undefined) body['merchant-order-id'] = clientOrderId;
  return body;
}

/**
 * The status reply about one operation of the order; while the order's last operation waits on
 * 3-D Secure it also says where the payer goes next (`isLast`).
 */
export function statusReply(
  order: Order,
  op: Operation,
  serialNumber: string,
  isLast: boolean,
): Reply {
  const reply: Reply = {
    type: 'status-response',
    status: op.status,
    amount: formatMinor(order.amountMinor, order.currency, order.endpoint.amountExponent),
    currency: order.currency,
    'paynet-order-id': order.orderId,
    'merchant-order-id': order.clientOrderId,
    'serial-number': serialNumber,
    'by-request-sn': op.serial,
    'transaction-type': op.type === 'return' ? 'reversal' : op.type,
    'order-stage': orderStage(order, op),
  };
  if (order.card) {
    reply['last-four-digits'] = order.card.lastFour;
    reply.bin = order.card.bin;
    if (order.card.brand) reply['card-type'] = order.card.brand;
    if (order.card.holder) reply['cardholder-name'] = order.card.holder;
    reply['card-exp-month'] = order.card.expMonth;
    reply['card-exp-year'] = order.card.expYear;
    reply['card-hash-id'] = order.card.panHash.slice(0, 20);
  }
  if (order.destination) reply['destination'] = order.destination;
  if (order.email) reply.email = order.email;
  if (op.approvalCode) {
    reply['approval-code'] = op.approvalCode;
    reply['processor-rrn'] = `${order.orderId}${op.serial.slice(-4)}`;
  }
  if (op.result?.errorMessage) reply['error-message'] = op.result.errorMessage;
  if (op.result?.errorCode !== undefined) reply['error-code'] = op.result.errorCode;
  const tds = order.threeDS;
  if (tds) {
    reply['verified-3d-status'] =
      tds.passed === undefined ? 'UNKNOWN' : tds.passed ? 'AUTHENTICATED' : 'NOT_AUTHENTICATED';
  } else if (op.result?.verified3d) {
    reply['verified-3d-status'] = op.result.verified3d;
  }
  if (op.status === 'processing' && tds && isLast) {
    const acsUrl = `${order.baseUrl}/acs/${tds.token}`;
    if (tds.stage === 'method') {
      // Sandbox extension (facts §5: how merchants learn these is not public).
      reply['threeds-method-url'] = `${order.baseUrl}/3ds-method/${tds.token}`;
      reply['threeds-server-trans-id'] = tds.serverTransId;
    } else if (tds.stage === 'challenge') {
      reply['threeds-server-trans-id'] = tds.serverTransId;
      if (order.endpoint.threeDSAction === 'html') {
        reply.html = autoPostFragment(acsUrl, acsRequestFields(order, tds));
      } else {
        reply['redirect-to'] = acsUrl;
      }
    }
  }
  return reply;
}

function acsRequestFields(order: Order, tds: ThreeDS): Record<string, string> {
  if (order.endpoint.threeDSProtocol === '1.0.2') {
    return {
      PaReq: Buffer.from(`sandbox-pareq:${tds.serverTransId}`).toString('base64'),
      MD: order.orderId,
      TermUrl: order.redirectUrl ?? '',
    };
  }
  const creq = {
    threeDSServerTransID: tds.serverTransId,
    acsTransID: tds.acsTransId,
    messageType: 'CReq',
    messageVersion: '2.2.0',
    challengeWindowSize: '05',
  };
  return { creq: Buffer.from(JSON.stringify(creq)).toString('base64url') };
}

function orderStage(order: Order, op: Operation): string {
  if (order.payoutCheck?.state === 'expired') return 'payout_check_expired';
  if (op.status === 'processing' && order.threeDS && order.threeDS.stage !== 'done') {
    return `${op.type}_3d_validating`;
  }
  if (op.status === 'processing' && order.hosted && !order.hosted.submitted) {
    return `${op.type}_awaiting_payer`;
  }
  const word: Record<Status, string> = {
    approved: 'approved',
    declined: 'declined',
    error: 'failed',
    filtered: 'filtered',
    processing: 'processing',
    unknown: 'unknown',
  };
  return `${op.type.replace(/-/g, '_')}_${word[op.status]}`;
}

export function html(status: number, body: string): PageResult {
  return { kind: 'html', status, html: body };
}
