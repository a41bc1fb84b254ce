import type {
  GatewayUploadCresResultRequest,
  GatewayUploadMethodUrlResultRequest,
  GatewayUploadParesResultRequest,
} from '@payments/contracts';
import { defined, type FamilyRows, plainRow } from '../operation-rows';

/** The 3-D Secure uploads name the order by `client-order-id` and `orderid`. */
const uploadReference = (request: { clientOrderId: string; gatewayOrderId: string }) => ({
  'client-order-id': request.clientOrderId,
  orderid: request.gatewayOrderId,
});

/**
 * The 3-D Secure uploads. One family of three files of one name: the gateway sandbox's
 * handlers and the client catalogue's rows of these operations are in their `families/three-ds.ts`.
 */
export const THREE_DS_ROWS: FamilyRows<
  'upload-method-url-result' | 'upload-cres-result' | 'upload-pares-result'
> = {
  'upload-method-url-result': plainRow(
    '3ds/v1/upload-method-url-result',
    (request: GatewayUploadMethodUrlResultRequest) => {
      const b = request.browser;
      return defined({
        ...uploadReference(request),
        threeDSCompInd: request.threeDSCompInd,
        threeDSServerTransID: request.threeDSServerTransID,
        browserAcceptHeader: b?.acceptHeader,
        browserUserAgent: b?.userAgent,
        browserLanguage: b?.acceptLanguage,
        browserJavascriptEnabled: b === undefined ? undefined : String(b.javascriptEnabled),
        browserJavaEnabled: b === undefined ? undefined : String(b.javaEnabled),
        browserColorDepth: b === undefined ? undefined : String(b.colorDepth),
        browserScreenWidth: b === undefined ? undefined : String(b.screenWidth),
        browserScreenHeight: b === undefined ? undefined : String(b.screenHeight),
        browserTZ: b === undefined ? undefined : String(b.timeZoneOffsetMinutes),
      });
    },
  ),
  'upload-cres-result': plainRow(
    '3ds/v1/upload-cres-result',
    (request: GatewayUploadCresResultRequest) => ({
      ...uploadReference(request),
      cRes: request.cRes,
    }),
  ),
  'upload-pares-result': plainRow(
    '3ds/v1/upload-pares-result',
    (request: GatewayUploadParesResultRequest) => ({
      ...uploadReference(request),
      PaRes: request.paRes,
    }),
  ),
};
