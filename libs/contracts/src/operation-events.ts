import { z } from 'zod';
import { Instant, Money, PayerAction, Uuid } from './primitives';
import { RejectionCode } from './rejection-codes';
import { sagaCommands } from './flow-family';

/**
 * The fields of the events every gateway flow publishes about its operation in flight, written
 * once: each flow's contracts module spreads them into its own event names (card payments'
 * `accepted-by-gateway`, payouts' `payout-accepted-by-gateway`, …) next to its id field and its
 * operation enum.
 */

/**
 * The gateway's serial number of one request (`serial-number` of its reply; `by-request-sn` of a
 * status reply about it). A status query can ask about exactly that request, and a status reply
 * says which request of the order it describes.
 */
export const GatewaySerial = z.string().min(1).max(64);

/**
 * Why an outcome is unknown beyond "no answer yet", when a person must look:
 *  - `no-trace`: after the request's deadline the gateway still shows no trace of it, and sending
 *    it again is not one the gateway could refuse as a duplicate (or was done once already);
 *  - `amount-mismatch`: the gateway reports another amount or currency than was asked for.
 */
export const UnknownConcern = z.enum(['no-trace', 'amount-mismatch']);
export type UnknownConcern = z.infer<typeof UnknownConcern>;

export const OPERATION_EVENT_FIELDS = {
  /** The gateway took the request; the outcome follows through status or callback. */
  acceptedByGateway: {
    gatewayOrderId: z.string().min(1).max(128).optional(),
    /** The gateway's serial number of this request, when its reply or a status reply named it. */
    serialNumber: GatewaySerial.optional(),
  },
  /**
   * The request may or may not have reached the gateway, or the gateway itself reports `unknown`.
   * Only a status reply about this very request (or a verified callback about an operation that
   * opens the order) resolves it. `alert` once a person must look: it lasted an hour, or
   * `concern` says why sooner.
   */
  outcomeUnknown: {
    since: Instant,
    alert: z.boolean(),
    concern: UnknownConcern.optional(),
    /** `amount-mismatch`: what the gateway reported (the requested amount is on the request). */
    reportedAmount: Money.optional(),
  },
  /**
   * The gateway had no trace of the request after its deadline, and the gateway refuses the
   * same request again as a duplicate: sent once more (same request id and client order id).
   */
  operationResent: {
    attempt: z.number().int().min(2),
    /** When the outcome became unknown; the gateway had no trace of it from then until now. */
    unknownSince: Instant,
  },
} as const;

/**
 * What a case's decision says about an operation the gateway left unsettled (issue 33): the
 * gateway did it (`done`, at the amount it reported) or did not (`not-done`). "Refresh and wait"
 * is no decision: it asks the gateway again and leaves the case open.
 */
export const CaseDecision = z.enum(['done', 'not-done']);
export type CaseDecision = z.infer<typeof CaseDecision>;

/** A person's name as the admin token names them. */
const CaseActor = z.string().min(1).max(128);

/**
 * The fields of a decision of two people about one operation (a case's), as the internal command
 * carries them and the `settled-by-decision` event publishes them: never card data.
 */
export const DECISION_FIELDS = {
  requestId: Uuid,
  caseId: Uuid,
  decision: CaseDecision,
  /** `done`: the amount the gateway did it at (the gateway's, e.g. its reported amount). */
  amount: Money.optional(),
  /** `done` at another amount than requested: why that amount (an amount mismatch's evidence). */
  amountWhy: z.string().min(1).max(1024).optional(),
  /** Who proposed the decision (operator role) and who approved it (approver role, another person). */
  decidedBy: CaseActor,
  approvedBy: CaseActor,
  reason: z.string().min(1).max(1024),
};

/** What the gateway's approval of an operation names: its order, and the issuer's approval code. */
export const APPROVAL_FIELDS = {
  gatewayOrderId: z.string().max(128).optional(),
  approvalCode: z.string().max(64).optional(),
};

/** What the gateway said when it declined or failed an operation. */
export const GATEWAY_ERROR_FIELDS = {
  code: z.string().max(64).optional(),
  message: z.string().max(1024).optional(),
};

/**
 * The event constructor of one family: every event carries its saga id, the command that caused
 * it, the saga's version (1, 2, 3, … with no gaps; a payout budget's from 0) and the time, in
 * that order, then its own fields.
 */
export function sagaEvents<F extends string>(sagaIdField: F, firstVersion = 1) {
  const base = {
    [sagaIdField]: Uuid,
    commandId: Uuid,
    version: z.number().int().min(firstVersion),
    occurredAt: Instant,
  } as { [K in F]: typeof Uuid } & {
    commandId: typeof Uuid;
    version: z.ZodNumber;
    occurredAt: typeof Instant;
  };
  return <T extends string, S extends z.ZodRawShape>(type: T, shape: S) =>
    z.strictObject({ type: z.literal(type), ...base, ...shape });
}

/**
 * `<prefix>command-rejected`: a command about the saga was refused. `version` is the saga's next
 * one; 0 when the command names a saga that does not exist (nothing is created for it, so the
 * rejection belongs to no saga's history). `commandType` is the `type` as sent (may be unknown to
 * us: UNKNOWN_TYPE).
 */
export function commandRejectedEvent<F extends string, P extends string>(
  sagaIdField: F,
  prefix: P,
) {
  return sagaEvents(sagaIdField)(`${prefix}command-rejected` as const, {
    version: z.number().int().min(0),
    commandType: z.string().min(1).max(64),
    reason: RejectionCode,
    message: z.string().max(1024),
  });
}

/**
 * The lifecycle events of a family's gateway operation in flight, written once: each family names
 * them with its prefix (card payments none: `accepted-by-gateway`; payouts `payout-`: …) and
 * addresses them by its saga id and its operation enum.
 */
export function operationLifecycle<F extends string, P extends string, O extends z.ZodType>(
  sagaIdField: F,
  prefix: P,
  operation: O,
) {
  const event = sagaEvents(sagaIdField);
  /** Which gateway request an event is about; `requestId` is stable across resends. */
  const operationRef = { operation, requestId: Uuid };
  return {
    event,
    operationRef,
    /** The gateway took the request; the outcome follows through status or callback. */
    acceptedByGateway: event(`${prefix}accepted-by-gateway` as const, {
      ...operationRef,
      ...OPERATION_EVENT_FIELDS.acceptedByGateway,
    }),
    /** The payer (or payee) must act: 3-D Secure challenge or hosted form. */
    actionRequired: event(`${prefix}action-required` as const, {
      ...operationRef,
      action: PayerAction,
    }),
    /** See OPERATION_EVENT_FIELDS.outcomeUnknown. */
    outcomeUnknown: event(`${prefix}outcome-unknown` as const, {
      ...operationRef,
      ...OPERATION_EVENT_FIELDS.outcomeUnknown,
    }),
    /** See OPERATION_EVENT_FIELDS.operationResent. */
    operationResent: event(`${prefix}operation-resent` as const, {
      ...operationRef,
      ...OPERATION_EVENT_FIELDS.operationResent,
    }),
    /** The issuer or the gateway declined the operation. */
    declined: <S extends z.ZodRawShape = Record<never, never>>(shape?: S) =>
      event(`${prefix}declined` as const, {
        ...operationRef,
        ...GATEWAY_ERROR_FIELDS,
        ...((shape ?? {}) as S),
      }),
    /**
     * The operation ended without success for a reason other than a decline: gateway `error` or
     * `filtered` status, the gateway refused the request (`rejected`), or it could not be sent
     * (`not-sent`).
     */
    failed: event(`${prefix}failed` as const, {
      ...operationRef,
      reason: z.enum(['error', 'filtered', 'rejected', 'not-sent']),
      ...GATEWAY_ERROR_FIELDS,
    }),
    /**
     * The operation settled by an audited decision of two people (a case), not by a gateway
     * answer: finance tells evidence from decision by this type. `done`: `amount` is the
     * gateway's (with `requestedAmount` and `amountWhy` when they differ); `not-done`: no money
     * moved (a money-out flow's reservation is released, follow-ups are taken again).
     */
    settledByDecision: event(`${prefix}settled-by-decision` as const, {
      operation,
      ...DECISION_FIELDS,
      /** What the operation asked for, when known. */
      requestedAmount: Money.optional(),
    }),
    /**
     * A gateway answer about an operation settled by decision contradicts the decision: the case
     * is open again and a person must look (`alert`). History is not rewritten: the decision's
     * event stands, this one says what the gateway said afterwards.
     */
    caseReopened: event(`${prefix}case-reopened` as const, {
      ...operationRef,
      caseId: Uuid,
      decision: CaseDecision,
      /** What the gateway said: it did the operation (`succeeded`, at `reportedAmount`) or not. */
      answer: z.enum(['succeeded', 'declined', 'failed']),
      reportedAmount: Money.optional(),
      alert: z.literal(true),
    }),
    commandRejected: commandRejectedEvent(sagaIdField, prefix),
  };
}

/**
 * `<prefix>settle-by-decision`: internal, the case service's command to the saga once a decision
 * was proposed and approved by two people; the flow's decider settles the operation by the one
 * shared rule (domain/gateway-operation), never sending the gateway anything.
 */
export function settleByDecisionCommand<F extends string, P extends string>(
  sagaIdField: F,
  prefix: P,
) {
  return sagaCommands(sagaIdField)(`${prefix}settle-by-decision` as const, DECISION_FIELDS);
}
