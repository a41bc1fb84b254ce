/**
 * The inputs of a unit of work (unit-of-work.ts): commands, gateway results and callbacks, and the
 * inbox row each gateway result and callback writes, so that it is acted on once.
 */
import type { CallbackMessage, GatewayResult } from '@payments/contracts';
import type { InputMeta } from './outbox/outbox-rows';
import type { CommandOrigin, Flow, SagaEvent } from './flow';

export interface RuntimeOptions {
  /** At most one status-check hint acted on per saga per interval. */
  readonly hintIntervalMs: number;
}

/** Inbox consumer names (one per consumed stream). */
export const INBOX = {
  gatewayResults: 'orchestrator:gateway-results',
  callbacks: 'orchestrator:gateway-callbacks',
} as const;

/** One input of a unit of work. */
export type RuntimeInput =
  /**
   * `origin` `saga`: a command the orchestrator issues itself (an internal type, e.g. the case
   * service's settle-by-decision), never taken from the commands topic. Default `topic`.
   */
  | { kind: 'command'; raw: unknown; meta: InputMeta; origin?: CommandOrigin }
  | { kind: 'gateway-result'; result: GatewayResult; meta: InputMeta }
  | { kind: 'callback'; message: CallbackMessage; meta: InputMeta };

export type AnyFlow = Flow<unknown, SagaEvent>;

/** A gateway result's inbox id: a request's attempt is answered once. */
export function resultMessageId(result: GatewayResult): string {
  return `${result.requestId}:${result.attempt}`;
}

/**
 * A callback's inbox id: its notification at the saga's version when it came. The gateway's
 * callback names the order, the type, the status and the amount but no operation, so two returns
 * of one amount on one order send the same parameters and callback-ingest gives them one
 * `notificationId` (a hash of them): keyed by it alone, the second return's callback was dropped
 * as a repeat of the first and its hint lost (session 16's chaos run: a refund reported 235 s
 * late). A repeat while the saga has not changed is still dropped; once the saga moved on (an
 * event since) the same notification is decided again, and every such decision is idempotent: a
 * follow-up's callback is only a hint, an opening operation's settles it once, a final saga's
 * changes nothing.
 */
export function callbackMessageId(message: CallbackMessage, sagaVersion: number): string {
  return `${message.notificationId}@v${sagaVersion}`;
}

/**
 * The inbox row an input writes before its saga is locked (gateway results; commands have their
 * own record; a callback's depends on its saga's version, written once the saga is locked).
 */
export function inboxOf(input: RuntimeInput): { consumer: string; messageId: string } | undefined {
  switch (input.kind) {
    case 'command':
    case 'callback':
      return undefined;
    case 'gateway-result':
      return { consumer: INBOX.gatewayResults, messageId: resultMessageId(input.result) };
    default: {
      const never: never = input;
      throw new Error(`unhandled input ${JSON.stringify(never)}`);
    }
  }
}

/** The inbox rows of `inputs`, in their order. */
export function inboxRows(
  inputs: readonly RuntimeInput[],
): Array<{ consumer: string; messageId: string }> {
  return inputs.flatMap((input) => inboxOf(input) ?? []);
}
