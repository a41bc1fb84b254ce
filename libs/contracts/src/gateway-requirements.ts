import { OPERATIONS, type OperationId } from '@payments/payment-gateway/catalogue';

/**
 * What the gateway requires of each command, derived from the gateway catalogue
 * (libs/payment-gateway `OPERATIONS[id].fields[name].required`), so the command schemas cannot
 * accept a command whose gateway call must fail. Written here by hand is only *where* each
 * gateway field's value comes from; *whether* it is required is the catalogue's answer.
 *
 * A gateway field comes from a path in the command (`customer.phone`; a card field from inside
 * `sealedCard`) or is supplied by the system (the gateway's order id, the callback URL). The
 * command schema makes every command path required whose gateway field is required
 * (`commands.ts`); a test checks that every required gateway field has a source, so a field the
 * catalogue starts to require cannot go unnoticed.
 */
export type FieldSource = { readonly command: string } | { readonly system: string };

const inCommand = (path: string): FieldSource => ({ command: path });
const system = (what: string): FieldSource => ({ system: what });

const fromSealedCard = inCommand('sealedCard');
const GATEWAY_ORDER_ID = system('the gateway order id of the payment, from the gateway’s reply');

/** Sale and preauth: the orchestrator copies these into the gateway request, the adapter maps them. */
const CARD_PAYMENT_SOURCES: Readonly<Record<string, FieldSource>> = {
  client_orderid: inCommand('paymentId'),
  order_desc: inCommand('order.description'),
  merchant_data: inCommand('order.merchantData'),
  amount: inCommand('amount.minor'),
  currency: inCommand('amount.currency'),
  address1: inCommand('billingAddress.address1'),
  city: inCommand('billingAddress.city'),
  zip_code: inCommand('billingAddress.zipCode'),
  country: inCommand('billingAddress.country'),
  state: inCommand('billingAddress.state'),
  email: inCommand('customer.email'),
  ipaddress: inCommand('customer.ipAddress'),
  phone: inCommand('customer.phone'),
  first_name: inCommand('customer.firstName'),
  last_name: inCommand('customer.lastName'),
  birthday: inCommand('customer.birthday'),
  ssn: inCommand('customer.ssnLastFour'),
  redirect_url: inCommand('redirectUrl'),
  server_callback_url: system('the gateway-adapter: callback-ingest’s URL for the endpoint'),
  card_printed_name: fromSealedCard,
  credit_card_number: fromSealedCard,
  expire_month: fromSealedCard,
  expire_year: fromSealedCard,
  cvv2: fromSealedCard,
};

/** Hosted forms: the order and payer fields of sale/preauth; the card is typed on the gateway's page. */
const HOSTED_FORM_SOURCES: Readonly<Record<string, FieldSource>> = Object.fromEntries(
  Object.entries(CARD_PAYMENT_SOURCES).filter(([, source]) => source !== fromSealedCard),
);

/** Account verification: no amount, no merchant data (the catalogue has neither field). */
const VERIFICATION_SOURCES: Readonly<Record<string, FieldSource>> = Object.fromEntries(
  Object.entries(CARD_PAYMENT_SOURCES).filter(
    ([name]) => !['amount', 'currency', 'merchant_data'].includes(name),
  ),
);
const VERIFICATION_FORM_SOURCES: Readonly<Record<string, FieldSource>> = Object.fromEntries(
  Object.entries(VERIFICATION_SOURCES).filter(([, source]) => source !== fromSealedCard),
);

/** The 3-D Secure uploads reference the payment's order. */
const UPLOAD_REFERENCE: Readonly<Record<string, FieldSource>> = {
  'client-order-id': inCommand('paymentId'),
  orderid: GATEWAY_ORDER_ID,
};

/** Capture and return: a partial amount, or none for the whole amount. */
const FOLLOW_UP_SOURCES: Readonly<Record<string, FieldSource>> = {
  client_orderid: inCommand('paymentId'),
  orderid: GATEWAY_ORDER_ID,
  amount: inCommand('amount.minor'),
  currency: inCommand('amount.currency'),
  comment: inCommand('comment'),
};

export interface CommandGatewayFields {
  /** The catalogue operation the command leads to. */
  readonly operation: OperationId;
  /** Gateway field name → where its value comes from. */
  readonly fields: Readonly<Record<string, FieldSource>>;
}

/** Per command type (`CommandType` in commands.ts; a `satisfies` there keeps the keys equal). */
export const COMMAND_GATEWAY_FIELDS = {
  sale: { operation: 'v2/sale', fields: CARD_PAYMENT_SOURCES },
  preauth: { operation: 'v2/preauth', fields: CARD_PAYMENT_SOURCES },
  capture: { operation: 'v2/capture', fields: FOLLOW_UP_SOURCES },
  void: {
    operation: 'v2/void',
    fields: {
      client_orderid: inCommand('paymentId'),
      orderid: GATEWAY_ORDER_ID,
      // Required by the gateway, optional in the command: the adapter sends "void" without one.
      comment: system('the command’s comment, else the gateway-adapter’s default'),
    },
  },
  return: { operation: 'v2/return', fields: FOLLOW_UP_SOURCES },
  'refresh-status': {
    operation: 'v2/status',
    fields: { client_orderid: inCommand('paymentId'), orderid: GATEWAY_ORDER_ID },
  },
  'sale-form': { operation: 'v2/sale-form', fields: HOSTED_FORM_SOURCES },
  'preauth-form': { operation: 'v2/preauth-form', fields: HOSTED_FORM_SOURCES },
  'payment-form': { operation: 'v2/payment-form', fields: HOSTED_FORM_SOURCES },
  'account-verification': { operation: 'v2/account-verification', fields: VERIFICATION_SOURCES },
  'account-verification-form': {
    operation: 'v2/account-verification-form',
    fields: VERIFICATION_FORM_SOURCES,
  },
  'upload-method-url-result': {
    operation: '3ds/v1/upload-method-url-result',
    fields: {
      ...UPLOAD_REFERENCE,
      threeDSCompInd: inCommand('threeDSCompInd'),
      threeDSServerTransID: inCommand('threeDSServerTransID'),
      browserAcceptHeader: inCommand('browser.acceptHeader'),
      browserUserAgent: inCommand('browser.userAgent'),
      browserLanguage: inCommand('browser.acceptLanguage'),
      browserJavascriptEnabled: inCommand('browser.javascriptEnabled'),
      browserJavaEnabled: inCommand('browser.javaEnabled'),
      browserColorDepth: inCommand('browser.colorDepth'),
      browserScreenWidth: inCommand('browser.screenWidth'),
      browserScreenHeight: inCommand('browser.screenHeight'),
      browserTZ: inCommand('browser.timeZoneOffsetMinutes'),
    },
  },
  'upload-cres-result': {
    operation: '3ds/v1/upload-cres-result',
    fields: { ...UPLOAD_REFERENCE, cRes: inCommand('cRes') },
  },
  'upload-pares-result': {
    operation: '3ds/v1/upload-pares-result',
    fields: { ...UPLOAD_REFERENCE, PaRes: inCommand('paRes') },
  },
} as const satisfies Readonly<Record<string, CommandGatewayFields>>;

export type GatewayRequiredCommandType = keyof typeof COMMAND_GATEWAY_FIELDS;

/** A command path that must be present because the gateway requires the field it fills. */
export interface GatewayRequirement {
  /** Path in the command, e.g. `['customer', 'phone']`. */
  readonly path: readonly string[];
  readonly operation: OperationId;
  /** The gateway fields it fills (several for `sealedCard`: number, expiry, CVV, name). */
  readonly fields: readonly string[];
}

/** The catalogue's fields of the command's operation. */
function catalogueFields(
  type: GatewayRequiredCommandType,
): Readonly<Record<string, { readonly required: boolean }>> {
  return OPERATIONS[COMMAND_GATEWAY_FIELDS[type].operation].fields;
}

/** Command paths required because the gateway requires them (derived from the catalogue). */
export function gatewayRequirements(type: GatewayRequiredCommandType): GatewayRequirement[] {
  const { operation, fields } = COMMAND_GATEWAY_FIELDS[type];
  const catalogue = catalogueFields(type);
  const byPath = new Map<string, string[]>();
  for (const [field, source] of Object.entries<FieldSource>(fields)) {
    if (catalogue[field]?.required === true && 'command' in source) {
      byPath.set(source.command, [...(byPath.get(source.command) ?? []), field]);
    }
  }
  return [...byPath].map(([path, names]) => ({ path: path.split('.'), operation, fields: names }));
}

/**
 * Problems with the mapping itself: a required gateway field with no source, or a source for a
 * field the catalogue does not have. Empty for a sound mapping (a unit test asserts it).
 */
export function gatewayMappingProblems(type: GatewayRequiredCommandType): string[] {
  const { operation, fields } = COMMAND_GATEWAY_FIELDS[type];
  const catalogue = catalogueFields(type);
  return [
    ...Object.entries(catalogue)
      .filter(([name, spec]) => spec.required && !Object.hasOwn(fields, name))
      .map(([name]) => `${type}: ${operation} requires ${name}, which has no source`),
    ...Object.keys(fields)
      .filter((name) => !Object.hasOwn(catalogue, name))
      .map((name) => `${type}: ${operation} has no field ${name}`),
  ];
}
