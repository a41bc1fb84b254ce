import { z } from 'zod';
import { byType, flowFamily, parseWith, sagaCommands, unionOf } from './flow-family';
import {
  GATEWAY_ERROR_FIELDS,
  operationLifecycle,
  settleByDecisionCommand,
} from './operation-events';
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

export const PanEligibilityCommand = sagaCommands('checkId')('pan-eligibility', {
  /** The card to check, by its gateway card reference (`sending-card-ref-id`). */
  cardRefId: GatewayCardRefId,
});
export type PanEligibilityCommand = z.infer<typeof PanEligibilityCommand>;

/**
 * Internal: the case service's settlement of a check whose outcome the gateway never cleared, by an
 * approved decision of two people (issue 33). Only "not done" is taken: whether the card is
 * eligible is the gateway's answer, which no person can give in its place.
 */
export const SettlePanEligibilityByDecisionCommand = settleByDecisionCommand(
  'checkId',
  'pan-eligibility-',
);
export type SettlePanEligibilityByDecisionCommand = z.infer<
  typeof SettlePanEligibilityByDecisionCommand
>;

const lifecycle = operationLifecycle('checkId', 'pan-eligibility-', PanEligibilityOperation);
const { event: checkEvent, operationRef } = lifecycle;

/**
 * The PAN-eligibility family: its one command, and the check's events (its gateway operation's
 * lifecycle is `operationLifecycle`'s).
 */
export const PAN_ELIGIBILITY_FAMILY = flowFamily({
  name: 'pan-eligibility',
  sagaIdField: 'checkId',
  commands: byType(PanEligibilityCommand, SettlePanEligibilityByDecisionCommand),
  events: byType(
    checkEvent('pan-eligibility-requested', {
      ...operationRef,
      clientOrderId: z.string().min(1).max(128),
      merchant: MerchantRef,
    }),
    lifecycle.acceptedByGateway,
    lifecycle.outcomeUnknown,
    lifecycle.operationResent,
    /** The gateway's answer: approved → eligible, declined → not eligible (with its code). */
    checkEvent('pan-eligibility-answered', {
      ...operationRef,
      eligible: z.boolean(),
      gatewayOrderId: z.string().max(128).optional(),
      ...GATEWAY_ERROR_FIELDS,
    }),
    lifecycle.failed,
    lifecycle.settledByDecision,
    lifecycle.caseReopened,
    lifecycle.commandRejected,
  ),
  internalCommands: ['pan-eligibility-settle-by-decision'],
});
export const PAN_ELIGIBILITY_COMMAND_SCHEMAS = PAN_ELIGIBILITY_FAMILY.commands;
export const PAN_ELIGIBILITY_EVENT_SCHEMAS = PAN_ELIGIBILITY_FAMILY.events;

export const AnyPanEligibilityCommand = unionOf(PAN_ELIGIBILITY_COMMAND_SCHEMAS);
export type AnyPanEligibilityCommand = z.infer<typeof AnyPanEligibilityCommand>;

export const PanEligibilityEvent = unionOf(PAN_ELIGIBILITY_EVENT_SCHEMAS);
export type PanEligibilityEvent = z.infer<typeof PanEligibilityEvent>;

/** For consumers of `payments.events.v1`: a PAN-eligibility event. */
export function parsePanEligibilityEvent(input: unknown) {
  return parseWith(PanEligibilityEvent, input);
}
