import type { GatewayRequest } from '@payments/contracts';
import type {
  HastenResend,
  ResendGatewayRequest,
} from '../../../domain/gateway-operation/gateway-operation';
import type { Timer, TimerKind } from './inputs';

/**
 * What the application layer must do, in the same transaction as appending the events
 * (outbox rows and timer rows).
 */
export type Effect =
  /**
   * Publish a new gateway request. `held`: written, not published, until a later decision's
   * `publish-held-request` (a follow-up waiting for the sale's serial, decide-serial.ts).
   */
  | { type: 'send-gateway-request'; request: GatewayRequest; held?: true }
  /** Publish the request a decision wrote held (as written: its first attempt). */
  | { type: 'publish-held-request'; requestId: string }
  /**
   * Publish the SAME request again (all fields as first sent, `attempt` bumped). The request is
   * kept by the app layer (it holds the sealed card, which never goes into state or events).
   */
  | ResendGatewayRequest
  /** The pending re-ask of an unknown card-reference request, made now (an operator's refresh). */
  | HastenResend
  /** Upsert the timer of this kind for the payment. */
  | { type: 'schedule-timer'; timer: Timer; at: string }
  | { type: 'cancel-timer'; timer: TimerKind };
