import { CONTROL_ONLY, O, op, S } from '../operation-def';

const TDS_CONTROL = ['login', 'client-order-id', 'orderid'] as const;
const TDS_REF = { 'client-order-id': S, orderid: S } as const;

/** The 3-D Secure uploads (3ds/v1, SHA-1 control). */
export const THREE_DS_OPERATIONS = {
  '3ds/v1/upload-method-url-result': op({
    id: '3ds/v1/upload-method-url-result',
    family: '3ds/v1',
    command: 'upload-method-url-result',
    name: 'TDS_UPLOAD_METHOD_URL_RESULT',
    auth: 'control',
    allowedAuth: CONTROL_ONLY,
    control: TDS_CONTROL,
    fields: {
      ...TDS_REF,
      threeDSCompInd: S,
      threeDSServerTransID: O,
      browserAcceptHeader: O,
      browserIP: O,
      browserJavaEnabled: O,
      browserJavascriptEnabled: O,
      browserLanguage: O,
      browserColorDepth: O,
      browserScreenHeight: O,
      browserScreenWidth: O,
      browserTZ: O,
      browserUserAgent: O,
    },
    sendsLogin: true,
    reply: 'async-response',
    groupPath: 'plain',
  }),
  '3ds/v1/upload-cres-result': op({
    id: '3ds/v1/upload-cres-result',
    family: '3ds/v1',
    command: 'upload-cres-result',
    name: 'TDS_UPLOAD_CRES_RESULT',
    auth: 'control',
    allowedAuth: CONTROL_ONLY,
    control: TDS_CONTROL,
    fields: { ...TDS_REF, cRes: S },
    sendsLogin: true,
    reply: 'async-response',
    groupPath: 'plain',
  }),
  '3ds/v1/upload-pares-result': op({
    id: '3ds/v1/upload-pares-result',
    family: '3ds/v1',
    command: 'upload-pares-result',
    name: 'TDS_UPLOAD_PARES_RESULT',
    auth: 'control',
    allowedAuth: CONTROL_ONLY,
    control: TDS_CONTROL,
    fields: { ...TDS_REF, PaRes: S },
    sendsLogin: true,
    reply: 'async-response',
    groupPath: 'plain',
  }),
} as const;
