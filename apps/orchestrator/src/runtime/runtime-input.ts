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

/** The inbox row an input writes (gateway results and callbacks; commands have their own record). */
export function inboxOf(input: RuntimeInput): { consumer: string; messageId: string } | undefined {
  switch (input.kind) {
    case 'command':
      return undefined;
    case 'gateway-result':
      return { consumer: INBOX.gatewayResults, messageId: resultMessageId(input.result) };
    case 'callback':
      return { consumer: INBOX.callbacks, messageId: input.message.notificationId };
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
