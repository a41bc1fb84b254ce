/**
 * The operation catalogue: one typed definition per operation of the card-payment API
 * (spec §4, §4.1, §4.2; request fields from the facts reference §7 where the spec says
 * "not shown"), its rows one file per operation family under `families/`, named as the gateway
 * sandbox's handler families and the adapter's operation-table families, so one operation's
 * three rows sit in files of one name. Everything the client does — path, auth scheme, `control`
 * formula, which fields exist and which are required, how the reply is parsed — is driven from
 * here.
 */
import { CARD_PAYMENT_OPERATIONS } from './families/card-payments';
import { CARD_REF_RECURRING_OPERATIONS } from './families/card-refs-recurring';
import { FOLLOW_UP_OPERATIONS } from './families/follow-ups';
import { HOSTED_FORM_OPERATIONS } from './families/hosted-forms';
import { PAYOUT_TRANSFER_OPERATIONS } from './families/payouts-transfers';
import { STATUS_OPERATIONS } from './families/status';
import { THREE_DS_OPERATIONS } from './families/three-ds';
import type { FieldMap, FieldSpec, OperationDef } from './operation-def';

export type {
  AuthScheme,
  Family,
  ReplyKind,
  FieldKind,
  Sensitivity,
  FieldSpec,
  FieldMap,
  ControlInput,
  OperationDef,
} from './operation-def';

/** The operation families, each a file of `families/` named as the sandbox's. */
const FAMILIES = [
  CARD_PAYMENT_OPERATIONS,
  HOSTED_FORM_OPERATIONS,
  FOLLOW_UP_OPERATIONS,
  STATUS_OPERATIONS,
  CARD_REF_RECURRING_OPERATIONS,
  PAYOUT_TRANSFER_OPERATIONS,
  THREE_DS_OPERATIONS,
] as const;

/** Every operation of the API by catalogue id, merged from the families. */
export const OPERATIONS = {
  ...CARD_PAYMENT_OPERATIONS,
  ...HOSTED_FORM_OPERATIONS,
  ...FOLLOW_UP_OPERATIONS,
  ...STATUS_OPERATIONS,
  ...CARD_REF_RECURRING_OPERATIONS,
  ...PAYOUT_TRANSFER_OPERATIONS,
  ...THREE_DS_OPERATIONS,
} as const;

// An id in two families would leave one of its rows unreachable.
if (FAMILIES.reduce((n, f) => n + Object.keys(f).length, 0) !== Object.keys(OPERATIONS).length)
  throw new Error('an operation id is defined by two families');

export type Operations = typeof OPERATIONS;
export type OperationId = keyof Operations;
export const OPERATION_IDS = Object.keys(OPERATIONS) as OperationId[];

// ---- request typing derived from the catalogue ----------------------------------------------

type ValueOf<S extends FieldSpec> = S['kind'] extends 'amount'
  ? number
  : S['kind'] extends 'boolean'
    ? boolean
    : string;

type RequiredKeys<F extends FieldMap> = {
  [K in keyof F]: F[K]['required'] extends true ? K : never;
}[keyof F];
type OptionalKeys<F extends FieldMap> = Exclude<keyof F, RequiredKeys<F>>;

/**
 * Request fields of an operation. `amount` is an integer number of MINOR units (safe integer
 * ≥ 0); the client formats it to the gateway's decimal string by the currency's exponent.
 * `extra` carries documented-but-uncatalogued fields (e.g. `customer_browser_*`) as strings.
 */
export type RequestFields<F extends FieldMap> = {
  -readonly [K in RequiredKeys<F>]: ValueOf<F[K]>;
} & {
  -readonly [K in OptionalKeys<F>]?: ValueOf<F[K]> | undefined;
} & { extra?: Readonly<Record<string, string>> };

export type RequestOf<Id extends OperationId> = RequestFields<Operations[Id]['fields']>;
export type ReplyKindOf<Id extends OperationId> = Operations[Id]['reply'];

export function getOperation(id: OperationId): OperationDef {
  return OPERATIONS[id];
}
