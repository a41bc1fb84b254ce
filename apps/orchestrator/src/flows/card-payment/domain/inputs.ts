import type {
  CardReferenceCommand,
  GatewayCallback,
  GatewayResult,
  PaymentCommand,
  PaymentOperation,
  SettleByDecisionCommand,
  StatusCheckHint,
} from '@payments/contracts';
import type { SerialQueryTimer } from '../../../domain/gateway-operation/operation-serial';

/**
 * Timers are keyed by (payment id, kind, request id): scheduling one replaces the previous of
 * that kind of the same request (a hold's expiry, naming none, is the payment's own).
 */
export type Timer =
  | { kind: 'status-poll'; requestId: string; attempt: number }
  | { kind: 'unknown-alert'; requestId: string }
  /** The send's result is overdue (the runtime arms it, domain/gateway-operation/operation-model.ts). */
  | { kind: 'result-deadline'; requestId: string; attempt: number }
  | { kind: 'hold-expiry'; action: HoldExpiryAction }
  /** 3-D Secure 2.x: the method step's 10 seconds are over (decide-payer-flows.ts). */
  | { kind: 'threeds-method-deadline'; requestId: string }
  /** A card-reference request unknown for the alert window (card-reference.ts). */
  | { kind: 'card-ref-alert'; requestId: string }
  /** The next status query about the serial of a sale settled without one (decide-serial.ts). */
  | SerialQueryTimer;
export type TimerKind = Timer['kind'];
export type HoldExpiryAction = 'void' | 'report';

/** Everything the payment decider reacts to. */
export type PaymentInput =
  /** A rebill, create-card-ref or get-card-info is decided in card-reference.ts. */
  /** `settle-by-decision`: internal, the case service's approved decision (decide-decision.ts). */
  | { kind: 'command'; command: PaymentCommand | CardReferenceCommand | SettleByDecisionCommand }
  /** `about`: for a status reply, the operations its transaction type can name (see callback). */
  | { kind: 'gateway-result'; result: GatewayResult; about?: readonly PaymentOperation[] }
  /**
   * `about`: the operations the callback's transaction type can name, normalised at the edge
   * (gateway vocabulary such as `reversal` never reaches the domain); undefined when it names none.
   */
  | { kind: 'callback'; callback: GatewayCallback; about?: readonly PaymentOperation[] }
  | { kind: 'status-check-hint'; hint: StatusCheckHint }
  | { kind: 'timer-fired'; timer: Timer };
