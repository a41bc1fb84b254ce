import type { Consumer } from 'kafkajs';

/**
 * Calls `then` when kafkajs leaves `consumer` stopped for good: a crash it does not restart from,
 * such as a non-retriable error — e.g. "the coordinator is loading", wrapped by its retrier after
 * a broker restart (libs/kafka's runner hands such errors back for the apps: consumer-errors.ts).
 * A test's observer then saw no more events while the stack went on: npm test's chaos e2e stalled
 * after its broker SIGTERM (test/chaos.md, Traps).
 */
export function onStoppedForGood(consumer: Consumer, then: () => void): void {
  consumer.on(consumer.events.CRASH, (event) => {
    if (!event.payload.restart) then();
  });
}
