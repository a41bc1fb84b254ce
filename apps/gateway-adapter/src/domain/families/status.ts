import type { GatewayStatusRequest } from '@payments/contracts';
import { defined, type FamilyRows, plainRow } from '../operation-rows';

/**
 * The status query. One family of three files of one name: the gateway sandbox's
 * handlers and the client catalogue's rows of these operations are in their `families/status.ts`.
 */
export const STATUS_ROWS: FamilyRows<'status'> = {
  status: plainRow('v2/status', (request: GatewayStatusRequest) =>
    defined({
      client_orderid: request.clientOrderId,
      orderid: request.gatewayOrderId,
      'by-request-sn': request.subjectSerial,
    }),
  ),
};
