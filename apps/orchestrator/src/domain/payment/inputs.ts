import type {
  GatewayCallback,
  GatewayResult,
  PaymentCommand,
  StatusCheckHint,
} from '@payments/contracts';

/** Timers are keyed by (payment id, kind): scheduling one replaces the previous of that kind. */
export type Timer =
  | { kind: 'status-poll'; requestId: string; attempt: number }
  | { kind: 'unknown-alert'; requestId: string }
  | { kind: 'hold-expiry'; action: HoldExpiryAction };
export type TimerKind = Timer['kind'];
export type HoldExpiryAction = 'void' | 'report';

/** Everything the payment decider reacts to. */
export type PaymentInput =
  | { kind: 'command'; command: PaymentCommand }
  | { kind: 'gateway-result'; result: GatewayResult }
  | { kind: 'callback'; callback: GatewayCallback }
  | { kind: 'status-check-hint'; hint: StatusCheckHint }
  | { kind: 'timer-fired'; timer: Timer };
