import {
  CARD,
  CONTROL_ONLY,
  O,
  op,
  ORDER_CUSTOMER,
  S,
  SALE_CONTROL,
  VERIFY_CONTROL,
  VERIFY_CUSTOMER,
} from '../operation-def';

/** Card payments with the card: sale, preauth, account verification (the sandbox's `families/card-payments.ts`). */
export const CARD_PAYMENT_OPERATIONS = {
  'v2/sale': op({
    id: 'v2/sale',
    family: 'v2',
    command: 'sale',
    name: 'SALE',
    auth: 'control',
    allowedAuth: CONTROL_ONLY,
    control: SALE_CONTROL,
    fields: { ...ORDER_CUSTOMER, phone: S, ...CARD, redirect_url: S },
    sendsLogin: false,
    reply: 'async-response',
  }),
  'v2/preauth': op({
    id: 'v2/preauth',
    family: 'v2',
    command: 'preauth',
    name: 'PREAUTH',
    auth: 'control',
    control: SALE_CONTROL,
    fields: { ...ORDER_CUSTOMER, phone: S, ...CARD, redirect_url: S },
    sendsLogin: false,
    reply: 'async-response',
  }),
  'v2/account-verification': op({
    id: 'v2/account-verification',
    family: 'v2',
    command: 'account-verification',
    name: 'ACCOUNT_VERIFICATION',
    auth: 'control',
    control: VERIFY_CONTROL,
    fields: { ...VERIFY_CUSTOMER, ...CARD, redirect_url: O },
    sendsLogin: false,
    reply: 'async-response',
  }),
} as const;
