import { z } from 'zod';

/** Identifiers are RFC 4122 UUIDs (any version; producers usually send v4 or v7). */
export const Uuid = z.uuid();

/** ISO 8601 instant with an offset or `Z`, e.g. `2025-01-31T12:00:00.000Z`. */
export const Instant = z.iso.datetime({ offset: true });

/** ISO 4217 alphabetic code: three upper-case letters. */
export const CurrencyCode = z
  .string()
  .regex(/^[A-Z]{3}$/, 'an ISO 4217 code (three upper-case letters)');

/**
 * Money: integer minor units plus currency. Never a float; the decimal string the gateway wants is
 * produced at the gateway edge from the currency's exponent.
 */
export const Money = z.strictObject({
  minor: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
  currency: CurrencyCode,
});
export type Money = z.infer<typeof Money>;

/** Which merchant endpoint of the gateway the payment runs on. */
export const MerchantRef = z.strictObject({
  endpointId: z.string().regex(/^\d{1,19}$/, 'the gateway endpoint id (digits)'),
  merchantId: z.string().min(1).max(64).optional(),
});
export type MerchantRef = z.infer<typeof MerchantRef>;

/** The most of a card that may leave the adapter: BIN, last four digits, brand. */
export const CardSummary = z.strictObject({
  bin: z
    .string()
    .regex(/^\d{6,8}$/)
    .optional(),
  lastFour: z
    .string()
    .regex(/^\d{4}$/)
    .optional(),
  brand: z.string().min(1).max(32).optional(),
});
export type CardSummary = z.infer<typeof CardSummary>;

/**
 * A card sealed to the gateway-adapter's public key (see sealing.ts):
 * `v1.<keyId>.<wrappedKey>.<iv>.<ciphertext>.<tag>`, every part base64url, keyId may be empty.
 */
export const SealedCard = z
  .string()
  .max(8192)
  .regex(
    /^v1\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/,
    'a sealed card envelope (v1.<kid>.<key>.<iv>.<ciphertext>.<tag>)',
  );
export type SealedCard = z.infer<typeof SealedCard>;

/** The gateway operations the orchestrator asks the adapter to perform. */
export const GatewayOperation = z.enum([
  'sale',
  'preauth',
  'capture',
  'void',
  'return',
  'status',
  'payout-check',
  'payout-pay',
  /** A charge of a card reference, cardholder absent (make-rebill). */
  'rebill',
  /** A card reference taken from a successful sale or preauth (v2 control or v4 RSA per endpoint). */
  'create-card-ref',
  /** BIN, last four and brand of a card reference (read-only). */
  'get-card-info',
  // Hosted forms, account verification and the 3-D Secure uploads.
  'sale-form',
  'preauth-form',
  'payment-form',
  'account-verification',
  'account-verification-form',
  'upload-method-url-result',
  'upload-cres-result',
  'upload-pares-result',
  'payout',
  'payout-v4',
  'payout-form',
  'transfer',
  'transfer-by-ref',
  'pan-eligibility',
  /**
   * v4 create-recurring-payment: registers a schedule with the gateway, which then
   * charges it on its own calendar (only on endpoints configured for it).
   */
  'create-recurring-payment',
]);
export type GatewayOperation = z.infer<typeof GatewayOperation>;

/**
 * What each gateway operation is, one row per operation (the compiler refuses a missing one).
 * `movesMoney`: approved, it takes money from the customer or pays money out (a sale, a capture,
 * a rebill, a payout, a transfer); a preauth only holds, a void releases, a return gives back,
 * and a check, a query or a card reference moves nothing; a card payment's hosted form is
 * settled as the sale or preauth it opens, a payout form is the payout itself. Reconciliation's
 * paid-twice lookup reads it (`MONEY_MOVING_OPERATIONS`).
 */
export const GATEWAY_OPERATION_TRAITS = {
  sale: { movesMoney: true },
  preauth: { movesMoney: false },
  capture: { movesMoney: true },
  void: { movesMoney: false },
  return: { movesMoney: false },
  status: { movesMoney: false },
  'payout-check': { movesMoney: false },
  'payout-pay': { movesMoney: true },
  rebill: { movesMoney: true },
  'create-card-ref': { movesMoney: false },
  'get-card-info': { movesMoney: false },
  'sale-form': { movesMoney: false },
  'preauth-form': { movesMoney: false },
  'payment-form': { movesMoney: false },
  'account-verification': { movesMoney: false },
  'account-verification-form': { movesMoney: false },
  'upload-method-url-result': { movesMoney: false },
  'upload-cres-result': { movesMoney: false },
  'upload-pares-result': { movesMoney: false },
  payout: { movesMoney: true },
  'payout-v4': { movesMoney: true },
  'payout-form': { movesMoney: true },
  transfer: { movesMoney: true },
  'transfer-by-ref': { movesMoney: true },
  'pan-eligibility': { movesMoney: false },
  'create-recurring-payment': { movesMoney: false },
} as const satisfies Record<GatewayOperation, { readonly movesMoney: boolean }>;

/** The operations that take money from the customer or pay it out when approved. */
export const MONEY_MOVING_OPERATIONS: readonly GatewayOperation[] = GatewayOperation.options.filter(
  (operation) => GATEWAY_OPERATION_TRAITS[operation].movesMoney,
);

/**
 * The card-payment operations that move money (a rebill charges a card reference), and
 * `account-verification` (zero amount: it confirms the card account, moves nothing). A hosted
 * form is the same operation (`sale`, `preauth`, `account-verification`) requested
 * `via: 'hosted-form'`.
 */
export const PaymentOperation = GatewayOperation.extract([
  'sale',
  'preauth',
  'capture',
  'void',
  'return',
  'rebill',
  'account-verification',
]);
export type PaymentOperation = z.infer<typeof PaymentOperation>;

/** Every operation a status query can be about (everything except `status` and the read-only get-card-info). */
export const SubjectOperation = GatewayOperation.exclude(['status', 'get-card-info']);
export type SubjectOperation = z.infer<typeof SubjectOperation>;

/** Transaction statuses the gateway reports (facts §4). Final: approved, declined, error, filtered. */
export const GatewayStatus = z.enum([
  'approved',
  'declined',
  'error',
  'filtered',
  'processing',
  'unknown',
  'chain_declined',
]);
export type GatewayStatus = z.infer<typeof GatewayStatus>;

export const FINAL_GATEWAY_STATUSES = ['approved', 'declined', 'error', 'filtered'] as const;
export type FinalGatewayStatus = (typeof FINAL_GATEWAY_STATUSES)[number];

export function isFinalGatewayStatus(status: GatewayStatus): status is FinalGatewayStatus {
  return (FINAL_GATEWAY_STATUSES as readonly string[]).includes(status);
}

/** What the payer's browser must do next (3-D Secure or a hosted form). */
export const PayerAction = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('redirect'), url: z.url() }),
  z.strictObject({ kind: z.literal('html'), html: z.string().min(1).max(65536) }),
  /**
   * 3-D Secure 2.x method step: load `url` in a hidden iframe of the payer's browser, then send
   * `upload-method-url-result` with `threeDSServerTransID` and `threeDSCompInd` Y (loaded), N (not
   * loaded within 10 s) or U.
   */
  z.strictObject({
    kind: z.literal('threeds-method'),
    url: z.url(),
    threeDSServerTransID: z.string().min(1).max(36),
  }),
]);
export type PayerAction = z.infer<typeof PayerAction>;
