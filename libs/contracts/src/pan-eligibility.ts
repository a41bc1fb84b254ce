import { z } from 'zod';
import { commandFields, flowFamily, parseWith, unionOf } from './flow-family';
import { GATEWAY_ERROR_FIELDS, operationLifecycle } from './operation-events';
import { MerchantRef } from './primitives';

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
  ...commandFields('checkId'),
  /** The card to check, by its gateway card reference (`sending-card-ref-id`). */
  cardRefId: GatewayCardRefId,
});
export type PanEligibilityCommand = z.infer<typeof PanEligibilityCommand>;

export const PAN_ELIGIBILITY_COMMAND_SCHEMAS = {
  'pan-eligibility': PanEligibilityCommand,
} as const;

const lifecycle = operationLifecycle('checkId', 'pan-eligibility-', PanEligibilityOperation);
const { event: checkEvent, operationRef } = lifecycle;

export const PanEligibilityRequested = checkEvent('pan-eligibility-requested', {
  ...operationRef,
  clientOrderId: z.string().min(1).max(128),
  merchant: MerchantRef,
});

export const PanEligibilityAcceptedByGateway = lifecycle.acceptedByGateway;

/** May or may not have reached the gateway; resolved only by a status reply or a verified callback. */
export const PanEligibilityOutcomeUnknown = lifecycle.outcomeUnknown;

export const PanEligibilityOperationResent = lifecycle.operationResent;

/** The gateway's answer: approved → eligible, declined → not eligible (with its code). */
export const PanEligibilityAnswered = checkEvent('pan-eligibility-answered', {
  ...operationRef,
  eligible: z.boolean(),
  gatewayOrderId: z.string().max(128).optional(),
  ...GATEWAY_ERROR_FIELDS,
});

export const PanEligibilityFailed = lifecycle.failed;
export const PanEligibilityCommandRejected = lifecycle.commandRejected;

export const PAN_ELIGIBILITY_EVENT_SCHEMAS = {
  'pan-eligibility-requested': PanEligibilityRequested,
  'pan-eligibility-accepted-by-gateway': PanEligibilityAcceptedByGateway,
  'pan-eligibility-outcome-unknown': PanEligibilityOutcomeUnknown,
  'pan-eligibility-operation-resent': PanEligibilityOperationResent,
  'pan-eligibility-answered': PanEligibilityAnswered,
  'pan-eligibility-failed': PanEligibilityFailed,
  'pan-eligibility-command-rejected': PanEligibilityCommandRejected,
} as const;

export const PanEligibilityEvent = unionOf(PAN_ELIGIBILITY_EVENT_SCHEMAS);
export type PanEligibilityEvent = z.infer<typeof PanEligibilityEvent>;

export const PAN_ELIGIBILITY_FAMILY = flowFamily({
  name: 'pan-eligibility',
  sagaIdField: 'checkId',
  commands: PAN_ELIGIBILITY_COMMAND_SCHEMAS,
  events: PAN_ELIGIBILITY_EVENT_SCHEMAS,
  internalCommands: [],
});

/** For consumers of `payments.events.v1`: a PAN-eligibility event. */
export function parsePanEligibilityEvent(input: unknown) {
  return parseWith(PanEligibilityEvent, input);
}
