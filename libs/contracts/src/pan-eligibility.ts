import { z } from 'zod';
import { OPERATION_EVENT_FIELDS } from './operation-events';
import { Instant, MerchantRef, Uuid } from './primitives';
import { RejectionCode } from './rejection-codes';

/**
 * PAN eligibility: asks the gateway (v2 pan-eligibility/send, OAuth HMAC-SHA1) whether
 * the card behind a gateway card reference can receive payouts. No money moves. Commands and
 * events name their saga by `checkId`, which is also the gateway `client-order-id`.
 */

export const PanEligibilityOperation = z.enum(['pan-eligibility']);
export type PanEligibilityOperation = z.infer<typeof PanEligibilityOperation>;

/** A gateway card reference id (`cardrefid`, from create-card-ref): a token, not card data. */
export const GatewayCardRefId = z
  .string()
  .regex(/^[A-Za-z0-9-]{1,20}$/, 'a gateway card reference id');

export const PanEligibilityCommand = z.strictObject({
  type: z.literal('pan-eligibility'),
  commandId: Uuid,
  checkId: Uuid,
  merchant: MerchantRef,
  occurredAt: Instant,
  /** The card to check, by its gateway card reference (`sending-card-ref-id`). */
  cardRefId: GatewayCardRefId,
});
export type PanEligibilityCommand = z.infer<typeof PanEligibilityCommand>;

export const PAN_ELIGIBILITY_COMMAND_SCHEMAS = {
  'pan-eligibility': PanEligibilityCommand,
} as const;

const eventBase = {
  checkId: Uuid,
  commandId: Uuid,
  version: z.number().int().min(1),
  occurredAt: Instant,
};
const checkEvent = <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
  z.strictObject({ type: z.literal(type), ...eventBase, ...shape });
const operationRef = { operation: PanEligibilityOperation, requestId: Uuid };
const gatewayError = {
  code: z.string().max(64).optional(),
  message: z.string().max(1024).optional(),
};

export const PanEligibilityRequested = checkEvent('pan-eligibility-requested', {
  ...operationRef,
  clientOrderId: z.string().min(1).max(128),
  merchant: MerchantRef,
});

export const PanEligibilityAcceptedByGateway = checkEvent('pan-eligibility-accepted-by-gateway', {
  ...operationRef,
  ...OPERATION_EVENT_FIELDS.acceptedByGateway,
});

/** May or may not have reached the gateway; resolved only by a status reply or a verified callback. */
export const PanEligibilityOutcomeUnknown = checkEvent('pan-eligibility-outcome-unknown', {
  ...operationRef,
  ...OPERATION_EVENT_FIELDS.outcomeUnknown,
});

export const PanEligibilityOperationResent = checkEvent('pan-eligibility-operation-resent', {
  ...operationRef,
  ...OPERATION_EVENT_FIELDS.operationResent,
});

/** The gateway's answer: approved → eligible, declined → not eligible (with its code). */
export const PanEligibilityAnswered = checkEvent('pan-eligibility-answered', {
  ...operationRef,
  eligible: z.boolean(),
  gatewayOrderId: z.string().max(128).optional(),
  ...gatewayError,
});

export const PanEligibilityFailed = checkEvent('pan-eligibility-failed', {
  ...operationRef,
  reason: z.enum(['error', 'filtered', 'rejected', 'not-sent']),
  ...gatewayError,
});

export const PanEligibilityCommandRejected = checkEvent('pan-eligibility-command-rejected', {
  version: z.number().int().min(0),
  commandType: z.string().min(1).max(64),
  reason: RejectionCode,
  message: z.string().max(1024),
});

export const PAN_ELIGIBILITY_EVENT_SCHEMAS = {
  'pan-eligibility-requested': PanEligibilityRequested,
  'pan-eligibility-accepted-by-gateway': PanEligibilityAcceptedByGateway,
  'pan-eligibility-outcome-unknown': PanEligibilityOutcomeUnknown,
  'pan-eligibility-operation-resent': PanEligibilityOperationResent,
  'pan-eligibility-answered': PanEligibilityAnswered,
  'pan-eligibility-failed': PanEligibilityFailed,
  'pan-eligibility-command-rejected': PanEligibilityCommandRejected,
} as const;

export const PanEligibilityEvent = z.discriminatedUnion('type', [
  PanEligibilityRequested,
  PanEligibilityAcceptedByGateway,
  PanEligibilityOutcomeUnknown,
  PanEligibilityOperationResent,
  PanEligibilityAnswered,
  PanEligibilityFailed,
  PanEligibilityCommandRejected,
]);
export type PanEligibilityEvent = z.infer<typeof PanEligibilityEvent>;

PAN_ELIGIBILITY_EVENT_SCHEMAS satisfies Record<PanEligibilityEvent['type'], z.ZodType>;

/** For consumers of `payments.events.v1`: a PAN-eligibility event. */
export function parsePanEligibilityEvent(
  input: unknown,
): { ok: true; event: PanEligibilityEvent } | { ok: false; details: string[] } {
  const parsed = PanEligibilityEvent.safeParse(input);
  return parsed.success
    ? { ok: true, event: parsed.data }
    : { ok: false, details: parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`) };
}
