/**
 * Which broker a jest worker of the integration and e2e tiers talks to. The apps' consumer groups
 * and topics have fixed names, so two stacks on one broker would take each other's messages:
 * scripts/with-infra.sh starts one broker per worker (KAFKA_BROKER_COUNT) and lists them in
 * KAFKA_WORKER_BROKERS; worker N (JEST_WORKER_ID, from 1) gets the Nth as its KAFKA_BROKERS.
 */
export function workerBrokers(
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const worker = Number(env.JEST_WORKER_ID ?? '1');
  const list = (env.KAFKA_WORKER_BROKERS ?? '').split(/\s+/).filter((b) => b !== '');
  if (list.length === 0) {
    if (worker > 1 && env.KAFKA_BROKERS) {
      throw new Error(
        `jest worker ${worker} would share KAFKA_BROKERS=${env.KAFKA_BROKERS} with worker 1: run ` +
          'with --runInBand, or through scripts/with-infra.sh with KAFKA_BROKER_COUNT=<workers>',
      );
    }
    return env.KAFKA_BROKERS;
  }
  const broker = list[worker - 1];
  if (broker === undefined) {
    throw new Error(
      `jest worker ${worker} has no broker of its own: KAFKA_WORKER_BROKERS lists ${list.length}; ` +
        'give jest at most that many workers (--maxWorkers) or start more (KAFKA_BROKER_COUNT)',
    );
  }
  return broker;
}
