import type { GatewayFollowUpRequest } from '@payments/contracts';
import { defined, type FamilyRows, plainRow } from '../operation-rows';

/** Void requires a comment at the gateway; the contract makes it optional. */
export const DEFAULT_VOID_COMMENT = 'void';

const reference = (request: GatewayFollowUpRequest) => ({
  client_orderid: request.clientOrderId,
  orderid: request.gatewayOrderId,
});

/** Capture / return: absent amount = the whole amount, so amount and currency are left out. */
const referenceAndMoney = (request: GatewayFollowUpRequest) =>
  defined({
    ...reference(request),
    ...(request.amount ? { amount: request.amount.minor, currency: request.amount.currency } : {}),
    comment: request.comment,
  });

/**
 * Follow-ups on an order: capture, void, return. One family of three files of one name: the gateway sandbox's
 * handlers and the client catalogue's rows of these operations are in their `families/follow-ups.ts`.
 */
export const FOLLOW_UP_ROWS: FamilyRows<'capture' | 'void' | 'return'> = {
  capture: plainRow('v2/capture', referenceAndMoney),
  // No partial amount on void (spec §3): the amount, if any, is not sent.
  void: plainRow('v2/void', (request: GatewayFollowUpRequest) => ({
    ...reference(request),
    comment: request.comment ?? DEFAULT_VOID_COMMENT,
  })),
  return: plainRow('v2/return', referenceAndMoney),
};
