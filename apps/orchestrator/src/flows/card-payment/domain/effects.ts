import type { GatewayRequest } from '@payments/contracts';
import type { Timer, TimerKind } from './inputs';

/**
 * What the application layer must do, in the same transaction as appending the events
 * (outbox rows and timer rows).
 */
export type Effect =
  /** Publish a new gateway request. */
  | { type: 'send-gateway-request'; request: GatewayRequest }
  /**
   * Publish the SAME request again (same requestId, same clientOrderId, all fields as first sent,
   * `attempt` bumped) not before `notBefore`. Only after a not-sent result. The request is kept by
   * the app layer (it holds the sealed card, which never goes into state or events).
   */
  | {
      type: 'resend-gateway-request';
      requestId: string;
      attempt: number;
      notBefore: string;
      /** The one resend after the gateway showed no trace of the request (operation-resent). */
      afterNoTrace?: true;
    }
  /** Upsert the timer of this kind for the payment. */
  | { type: 'schedule-timer'; timer: Timer; at: string }
  | { type: 'cancel-timer'; timer: TimerKind };
