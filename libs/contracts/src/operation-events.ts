import { z } from 'zod';
import { Instant, Money } from './primitives';

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
