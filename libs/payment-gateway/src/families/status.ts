import { O, op, REF_CONTROL, S } from '../operation-def';

/** The status query. */
export const STATUS_OPERATIONS = {
  'v2/status': op({
    id: 'v2/status',
    family: 'v2',
    command: 'status',
    name: 'STATUS',
    auth: 'control',
    control: REF_CONTROL,
    fields: { client_orderid: S, orderid: O, 'by-request-sn': O },
    sendsLogin: true,
    reply: 'status-response',
    retriable: true,
  }),
} as const;
