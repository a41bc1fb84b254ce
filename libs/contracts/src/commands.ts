import { z } from 'zod';
import { EVENT_SCHEMAS } from './events';
import { byType, flowFamily, sagaCommands, unionOf } from './flow-family';
import {
  COMMAND_GATEWAY_FIELDS,
  gatewayRequirements,
  type GatewayRequiredCommandType,
} from './gateway-requirements';
import { settleByDecisionCommand } from './operation-events';
import { Money, SealedCard } from './primitives';
import { CARD_REFERENCE_COMMAND_SCHEMAS } from './schedules';

export const BillingAddress = z.strictObject({
  address1: z.string().min(1).max(50),
  city: z.string().min(1).max(50),
  zipCode: z.string().min(1).max(10),
  /** ISO 3166-1 alpha-2. */
  country: z.string().regex(/^[A-Z]{2}$/, 'an ISO 3166-1 alpha-2 country code'),
  /** Required by the gateway for US, CA and AU. */
  state: z.string().min(1).max(2).optional(),
});
export type BillingAddress = z.infer<typeof BillingAddress>;

export const Customer = z.strictObject({
  email: z.email().max(50),
  ipAddress: z.union([z.ipv4(), z.ipv6()]),
  phone: z
    .string()
    .regex(/^\+?\d{6,15}$/, 'a full international phone number')
    .optional(),
  firstName: z.string().min(1).max(50).optional(),
  lastName: z.string().min(1).max(50).optional(),
  /** YYYYMMDD */
  birthday: z
    .string()
    .regex(/^\d{8}$/)
    .optional(),
  ssnLastFour: z
    .string()
    .regex(/^\d{4}$/)
    .optional(),
});
export type Customer = z.infer<typeof Customer>;

/** 3-D Secure 2 browser data (facts §5), collected by the merchant's checkout page. */
export const BrowserInfo = z.strictObject({
  acceptHeader: z.string().max(2048),
  userAgent: z.string().max(2048),
  acceptLanguage: z.string().max(8),
  javascriptEnabled: z.boolean(),
  javaEnabled: z.boolean(),
  colorDepth: z.number().int().min(1).max(99),
  screenWidth: z.number().int().min(0).max(99999),
  screenHeight: z.number().int().min(0).max(99999),
  timeZoneOffsetMinutes: z.number().int().min(-900).max(900),
});
export type BrowserInfo = z.infer<typeof BrowserInfo>;

const paymentInitiation = {
  amount: Money,
  order: z.strictObject({
    description: z.string().min(1).max(65535),
    /** Echoed by the gateway in callbacks (`merchantdata`). */
    merchantData: z.string().max(1024).optional(),
  }),
  customer: Customer,
  billingAddress: BillingAddress,
  /** Where the payer's browser returns after 3-D Secure. */
  redirectUrl: z.url(),
  browser: BrowserInfo.optional(),
  /** The card, sealed to the gateway-adapter's key with the payment id as associated data. */
  sealedCard: SealedCard,
};

type ObjectSchema = z.ZodObject<Record<string, z.core.$ZodType>, z.core.$ZodObjectConfig>;

function requirePath(schema: ObjectSchema, path: readonly string[]): ObjectSchema {
  const [head, ...rest] = path;
  const shape: Readonly<Record<string, z.core.$ZodType | undefined>> = schema.shape;
  const current = head === undefined ? undefined : shape[head];
  if (head === undefined || current === undefined) {
    throw new Error(
      `gateway requirement names a path the command does not have: ${path.join('.')}`,
    );
  }
  const inner: z.core.$ZodType = current instanceof z.ZodOptional ? current.unwrap() : current;
  if (rest.length === 0) return schema.extend({ [head]: inner });
  if (!(inner instanceof z.ZodObject)) {
    throw new Error(`gateway requirement path ${path.join('.')} goes through a non-object`);
  }
  return schema.extend({ [head]: requirePath(inner as unknown as ObjectSchema, rest) });
}

const paymentCommand = sagaCommands('paymentId');

/**
 * A card-payment command (`paymentId`), with every path made required whose gateway field the
 * catalogue requires (gateway-requirements.ts): a command that cannot succeed at the gateway is
 * refused at parsing (SCHEMA_INVALID, with the path), not after it was accepted. The static type
 * stays the one of the base schema (wider: such fields still look optional to TypeScript).
 */
function command<T extends GatewayRequiredCommandType, S extends z.ZodRawShape>(type: T, shape: S) {
  const schema = paymentCommand(type, shape);
  let out = schema as unknown as ObjectSchema;
  for (const requirement of gatewayRequirements(type)) out = requirePath(out, requirement.path);
  return out as unknown as typeof schema;
}

export const SaleCommand = command('sale', paymentInitiation);
export type SaleCommand = z.infer<typeof SaleCommand>;
export const PreauthCommand = command('preauth', paymentInitiation);
export type PreauthCommand = z.infer<typeof PreauthCommand>;

/** Capture of an authorized preauth; without `amount` the remaining authorized amount. */
export const CaptureCommand = command('capture', { amount: Money.optional() });
export type CaptureCommand = z.infer<typeof CaptureCommand>;

/** What a void or a return may say besides its amount. */
const Comment = z.string().min(1).max(50);

/** Void of an authorized, uncaptured preauth. Always whole; an `amount` must equal the authorized one. */
export const VoidCommand = command('void', {
  amount: Money.optional(),
  comment: Comment.optional(),
});
export type VoidCommand = z.infer<typeof VoidCommand>;

/** Return after final success; without `amount` the whole remaining balance. */
export const ReturnCommand = command('return', {
  amount: Money.optional(),
  comment: Comment.optional(),
});
export type ReturnCommand = z.infer<typeof ReturnCommand>;

/** Asks for a status query of the operation in flight now, instead of waiting for the next poll. */
export const RefreshStatusCommand = command('refresh-status', {});
export type RefreshStatusCommand = z.infer<typeof RefreshStatusCommand>;

/**
 * Hosted forms: the payer types the card on the gateway's page, so the command
 * carries no card at all (nothing about the card passes through this service). The gateway's
 * form URL comes back as `action-required`; the outcome by callback or status query.
 */
const hostedInitiation = {
  amount: Money,
  order: paymentInitiation.order,
  customer: Customer,
  billingAddress: BillingAddress,
  /** Where the payer's browser returns after the form (and 3-D Secure). */
  redirectUrl: z.url(),
};

export const SaleFormCommand = command('sale-form', hostedInitiation);
export type SaleFormCommand = z.infer<typeof SaleFormCommand>;
export const PreauthFormCommand = command('preauth-form', hostedInitiation);
export type PreauthFormCommand = z.infer<typeof PreauthFormCommand>;
/** The universal hosted form: a sale on the gateway's page, for when sale-form does not fit. */
export const PaymentFormCommand = command('payment-form', hostedInitiation);
export type PaymentFormCommand = z.infer<typeof PaymentFormCommand>;

/** Account verification: zero amount, nothing charged; the card account is checked. */
const verificationBase = {
  order: z.strictObject({ description: z.string().min(1).max(65535) }),
  customer: Customer,
  billingAddress: BillingAddress,
};

/** Account verification with the card sealed (direct). */
export const AccountVerificationCommand = command('account-verification', {
  ...verificationBase,
  redirectUrl: z.url().optional(),
  sealedCard: SealedCard,
});
export type AccountVerificationCommand = z.infer<typeof AccountVerificationCommand>;

/** Account verification with the card typed on the gateway's hosted page. */
export const AccountVerificationFormCommand = command('account-verification-form', {
  ...verificationBase,
  redirectUrl: z.url(),
});
export type AccountVerificationFormCommand = z.infer<typeof AccountVerificationFormCommand>;

/**
 * 3-D Secure 2.x method step, from the merchant's front end: `threeDSCompInd` Y (the method
 * completed), N (it did not complete within 10 seconds: the front end sends N then), U (no
 * method URL was given).
 */
export const UploadMethodUrlResultCommand = command('upload-method-url-result', {
  threeDSCompInd: z.enum(['Y', 'N', 'U']),
  threeDSServerTransID: z.string().min(1).max(36).optional(),
  browser: BrowserInfo.optional(),
});
export type UploadMethodUrlResultCommand = z.infer<typeof UploadMethodUrlResultCommand>;

const Base64 = z.string().regex(/^[A-Za-z0-9+/_-]+={0,2}$/, 'Base64');

/** The CRes the ACS posted at the end of a 3-D Secure 2.x challenge (Base64). */
export const UploadCresResultCommand = command('upload-cres-result', { cRes: Base64.max(4096) });
export type UploadCresResultCommand = z.infer<typeof UploadCresResultCommand>;

/** The PaRes of a 3-D Secure 1.0.2 flow (Base64). */
export const UploadParesResultCommand = command('upload-pares-result', {
  paRes: Base64.max(16384),
});
export type UploadParesResultCommand = z.infer<typeof UploadParesResultCommand>;

export const COMMAND_SCHEMAS = byType(
  SaleCommand,
  PreauthCommand,
  CaptureCommand,
  VoidCommand,
  ReturnCommand,
  RefreshStatusCommand,
  SaleFormCommand,
  PreauthFormCommand,
  PaymentFormCommand,
  AccountVerificationCommand,
  AccountVerificationFormCommand,
  UploadMethodUrlResultCommand,
  UploadCresResultCommand,
  UploadParesResultCommand,
);

export const PaymentCommand = unionOf(COMMAND_SCHEMAS);
export type PaymentCommand = z.infer<typeof PaymentCommand>;
export type CommandType = PaymentCommand['type'];

export const COMMAND_TYPES = Object.keys(COMMAND_SCHEMAS) as CommandType[];

/**
 * Internal: the case service's settlement of a payment's operation by an approved decision of two
 * people (issue 33); never from the commands topic.
 */
export const SettleByDecisionCommand = settleByDecisionCommand('paymentId', '');
export type SettleByDecisionCommand = z.infer<typeof SettleByDecisionCommand>;

/** Card payments: the payment commands, and the card-reference commands a payment hosts. */
export const CARD_PAYMENT_FAMILY = flowFamily({
  name: 'card-payment',
  sagaIdField: 'paymentId',
  commands: {
    ...COMMAND_SCHEMAS,
    ...CARD_REFERENCE_COMMAND_SCHEMAS,
    'settle-by-decision': SettleByDecisionCommand,
  },
  events: EVENT_SCHEMAS,
  internalCommands: ['settle-by-decision'],
});

// Every command type names its gateway operation and field sources, and nothing else does.
COMMAND_GATEWAY_FIELDS satisfies Record<CommandType, unknown>;
COMMAND_SCHEMAS satisfies Record<GatewayRequiredCommandType, z.ZodType>;
