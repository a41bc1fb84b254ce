import { AMOUNT_OPT, CURRENCY_OPT, O, op, REF, REF_CONTROL, S } from '../operation-def';

/** Follow-ups on an order: capture, void, return. */
export const FOLLOW_UP_OPERATIONS = {
  'v2/capture': op({
    id: 'v2/capture',
    family: 'v2',
    command: 'capture',
    name: 'CAPTURE',
    auth: 'control',
    control: ['login', 'client_orderid', 'orderid', 'amount', 'currency'],
    fields: { ...REF, amount: AMOUNT_OPT, currency: CURRENCY_OPT, comment: O },
    together: [['amount', 'currency']],
    sendsLogin: true,
    reply: 'async-response',
  }),
  'v2/void': op({
    id: 'v2/void',
    family: 'v2',
    command: 'void',
    name: 'VOID',
    auth: 'control',
    control: REF_CONTROL,
    // Spec §3: no partial amount on void, so no amount/currency fields.
    fields: { ...REF, comment: S },
    sendsLogin: true,
    reply: 'async-response',
  }),
  'v2/return': op({
    id: 'v2/return',
    family: 'v2',
    command: 'return',
    name: 'RETURN',
    auth: 'control',
    control: ['login', 'client_orderid', 'orderid', 'amount', 'currency'],
    fields: { ...REF, amount: AMOUNT_OPT, currency: CURRENCY_OPT, comment: O },
    together: [['amount', 'currency']],
    sendsLogin: true,
    reply: 'async-response',
  }),
} as const;
