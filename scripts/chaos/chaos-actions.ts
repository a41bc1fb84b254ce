import type { PaymentStack } from '../stack/payment-stack';
import { DatabaseOutage } from '../stack/database-outage';
import { sleep } from '../stack/processes';
import {
  type ActionRecord,
  type ChaosAction,
  type ChaosEnvironment,
  type FailoverRecord,
  isBrokerTarget,
} from './chaos-config';
import { brokerNodeFor, kraftController } from './infrastructure';

/**
 * The chaos run's actions (chaos-run.ts), one after another in one chain: a replica SIGKILLed or
 * SIGTERMed and started again, a Kafka node restarted, the PostgreSQL primary lost, the adapter's
 * database out for a while; each recorded with when it began and when what it hit was back.
 */
export class ChaosActions {
  readonly actions: ActionRecord[] = [];
  readonly failovers: FailoverRecord[] = [];
  /** The adapter's database outage (wall-clock ms; `to` 0: none ended). */
  readonly outageWindow = { from: 0, to: 0 };
  private chain: Promise<void> = Promise.resolve();
  private brokerTurn = 0;
  private readonly clusterPort: number;

  constructor(
    private readonly stack: PaymentStack,
    private readonly env: ChaosEnvironment,
    /** A URL of one host for the run's own SQL: the primary's when replicated. */
    private readonly oneHost: (url: string) => Promise<string>,
  ) {
    this.clusterPort = Number(env.broker.brokers[0]?.split(':').at(-1));
  }

  /** Every action queued so far done (rejects with the first that failed). */
  done(): Promise<void> {
    return this.chain;
  }

  /**
   * The adapter's database out for `seconds`. In the chain of chaos actions, so no replica of the
   * adapter is restarting meanwhile (an app does not start without its database: that would be
   * another test).
   */
  outage(seconds: number): void {
    const { log } = this.env;
    const window = this.outageWindow;
    this.chain = this.chain.then(async () => {
      log(`chaos: the adapter's database out for ${seconds} s`);
      const outage = await DatabaseOutage.start(await this.oneHost(this.env.adapterDatabaseUrl));
      window.from = Date.now();
      try {
        await sleep(seconds * 1000);
      } finally {
        await outage.end().catch((error: unknown) => {
          log(`chaos: ending the database outage failed: ${(error as Error).message}`);
        });
        window.to = Date.now();
        log(`chaos: the adapter's database back`);
      }
    });
  }

  fire(action: ChaosAction): void {
    const { log, broker } = this.env;
    this.chain = this.chain.then(async () => {
      const at = Date.now();
      if (action.target === 'postgres') {
        // Checked at the start: a postgres action needs the replicated database.
        const database = this.env.database;
        if (database === undefined) throw new Error('no replicated PostgreSQL');
        log(
          `chaos: ${action.signal} the PostgreSQL primary (keeper and postmaster: the node lost)`,
        );
        const record = await loseThePrimary(database, this.env.orchestratorDatabaseUrl, log);
        this.failovers.push(record);
        this.actions.push({
          ...action,
          at,
          node: record.killedNode,
          backAt: record.writableAt ?? Date.now(),
          ...(record.writableAt === undefined ? {} : { recoveryMs: record.writableAt - at }),
        });
      } else if (isBrokerTarget(action.target)) {
        // Chosen when the action runs: the controller may have moved since the last one.
        const controller = broker.cluster ? kraftController(this.clusterPort) : undefined;
        const node = brokerNodeFor(action.target, broker.cluster, controller, this.brokerTurn);
        if (action.target === 'broker') this.brokerTurn += 1;
        log(
          `chaos: ${action.signal} ${action.target}${broker.cluster ? ` (node ${node}; the KRaft controller is node ${controller ?? '?'})` : ''}`,
        );
        await broker.restart(action.signal, node);
        this.actions.push({ ...action, at, node, backAt: Date.now() });
      } else {
        log(`chaos: ${action.signal} ${action.target}`);
        await this.stack.kill(action.target, action.signal);
        const backAt = Date.now();
        await this.stack.startAgain(action.target);
        this.actions.push({ ...action, at, backAt, recoveryMs: Date.now() - at });
      }
      log(`chaos: ${action.target} back after ${((Date.now() - at) / 1000).toFixed(1)} s`);
    });
  }
}

/** How long a client of the multi-host URL may wait for a writable primary before the run says so. */
const NO_PRIMARY_LIMIT_MS = 120_000;
/** The promoted primary serves alone this long before the lost node comes back as its standby. */
const REJOIN_AFTER_MS = 15_000;

/**
 * The PostgreSQL primary lost (`pg-ha.sh kill-primary`: SIGKILL of its keeper and postmaster, so
 * nothing restarts it, as a lost machine), the standby promoted by the pg_auto_failover monitor;
 * waits for a client of the multi-host URL to write again, then brings the lost node back
 * (`rejoin`: its keeper rewinds it into a standby) and waits for synchronous replication.
 */
async function loseThePrimary(
  database: NonNullable<ChaosEnvironment['database']>,
  url: string,
  log: (line: string) => void,
): Promise<FailoverRecord> {
  const killedAt = Date.now();
  let killedNode = 0;
  try {
    killedNode = await database.killPrimary();
  } catch (error) {
    return { killedAt, killedNode, error: (error as Error).message };
  }
  let writableAt: number | undefined;
  while (writableAt === undefined && Date.now() - killedAt < NO_PRIMARY_LIMIT_MS) {
    if (await database.writable(url)) writableAt = Date.now();
    else await sleep(200);
  }
  const newPrimaryPort = await database.primaryPort();
  if (writableAt === undefined) {
    log(`chaos: no writable PostgreSQL primary ${NO_PRIMARY_LIMIT_MS / 1000} s after the kill`);
    return { killedAt, killedNode, newPrimaryPort, error: 'no writable primary' };
  }
  log(
    `chaos: PostgreSQL node${killedNode} lost; a writable primary (port ${newPrimaryPort}) after ${((writableAt - killedAt) / 1000).toFixed(1)} s`,
  );
  await sleep(REJOIN_AFTER_MS);
  try {
    await database.rejoin(killedNode);
  } catch (error) {
    log(`chaos: node${killedNode} did not rejoin: ${(error as Error).message}`);
    return {
      killedAt,
      killedNode,
      newPrimaryPort,
      writableAt,
      error: 'the lost node did not rejoin',
    };
  }
  const rejoinedAt = Date.now();
  log(
    `chaos: PostgreSQL node${killedNode} rejoined as a synchronous standby ${((rejoinedAt - killedAt) / 1000).toFixed(1)} s after the kill`,
  );
  return { killedAt, killedNode, newPrimaryPort, writableAt, rejoinedAt };
}
