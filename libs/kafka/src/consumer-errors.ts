import { KafkaJSError, KafkaJSProtocolError } from 'kafkajs';

/**
 * Thrown into kafkajs for messages reached after a stop began: they stay uncommitted and kafkajs
 * does not move on to later messages of the batch. Retriable on purpose: kafkajs's fetch loop then
 * sees that it is no longer running and ends quietly (a non-retriable error would be a CRASH).
 */
export class ConsumerStoppingError extends KafkaJSError {
  constructor() {
    super('consumer is stopping; message left for redelivery', { retriable: true });
  }
}

/**
 * kafkajs's protocol errors its runner answers by re-joining the group (`isRebalancing`, and
 * UNKNOWN_MEMBER_ID, which a broker restart produced in the chaos run).
 */
const REBALANCE_ERRORS = [
  {
    type: 'NOT_COORDINATOR_FOR_GROUP',
    code: 16,
    message: 'This is not the correct coordinator for this group',
  },
  { type: 'ILLEGAL_GENERATION', code: 22, message: 'Specified group generation id is not valid' },
  {
    type: 'REBALANCE_IN_PROGRESS',
    code: 27,
    message: 'The group is rebalancing, so a rejoin is needed',
  },
  {
    type: 'UNKNOWN_MEMBER_ID',
    code: 25,
    message: 'The coordinator is not aware of this member',
  },
] as const;

/**
 * The group's coordinator is loading its state or not available yet: what a commit meets right
 * after a broker restart, once kafkajs's own commit retries are spent. The answer is the same as
 * for a moved coordinator — find it again and re-join — so it is handed back to kafkajs as
 * NOT_COORDINATOR_FOR_GROUP, which its runner re-joins on; otherwise the wrapped error crashed
 * the consumer for good and only the liveness probe brought it back.
 */
const COORDINATOR_AWAY_ERRORS = [
  {
    type: 'GROUP_LOAD_IN_PROGRESS',
    message: "The coordinator is loading and hence can't process requests for this group",
  },
  { type: 'GROUP_COORDINATOR_NOT_AVAILABLE', message: 'The group coordinator is not available' },
] as const;

const FIND_COORDINATOR_AGAIN = REBALANCE_ERRORS[0];

/**
 * The protocol error saying the group moved on (or its coordinator is away), when `error` is one
 * or wraps one. kafkajs's retrier re-wraps it as KafkaJSNonRetriableError keeping only the
 * message, so the message is matched too; the result carries the `type` kafkajs's runner
 * re-joins on.
 */
export function rebalanceCause(error: unknown): Error | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 8 && current instanceof Error; depth++) {
    const { message } = current;
    const type = (current as { type?: unknown }).type;
    const matches = (e: { type: string; message: string }) =>
      e.type === type || e.message === message;
    const known =
      REBALANCE_ERRORS.find(matches) ??
      (COORDINATOR_AWAY_ERRORS.some(matches) ? FIND_COORDINATOR_AGAIN : undefined);
    if (known) {
      // kafkajs's typings take a string or an Error; its constructor reads type, code, retriable.
      const protocolError = Object.assign(new Error(known.message), known, { retriable: false });
      return new KafkaJSProtocolError(protocolError);
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
