/** What a chaos run is given (its configuration, its environment) and what it reports. */
import { AuditReport } from '../stack/card-data-audit';
import type { OwnBroker } from '../stack/infra';
import { ReplicaName } from '../stack/payment-stack';
import { FaultRule } from '../stack/sandbox-controls';
import { type Problem, RunChecks } from './checks';
import type { TimeToTruth } from './time-to-truth';
import type { DayCloseResult } from './day-close';
import { type ScheduleChecks } from './schedule-checks';
import { type SchedulePhase, type ScheduleWorkload } from './schedule-plan';

/**
 * An app's replica, or the infrastructure: `broker` (a Kafka node; on a cluster one that is not
 * the KRaft controller, in turn), `controller` (the node that is the KRaft quorum's leader; on a
 * single broker the same as `broker`), `postgres` (the replicated PostgreSQL's primary node lost:
 * `pg-ha.sh kill-primary`, then rejoined as a standby; needs the run's replicated database).
 */
export type ChaosTarget =
  Exclude<ReplicaName, 'gateway-sandbox'> | 'broker' | 'controller' | 'postgres';

/** The run's infrastructure rather than an app's replica: every app waits through it. */
export function isInfrastructure(
  target: ChaosTarget,
): target is 'broker' | 'controller' | 'postgres' {
  return target === 'broker' || target === 'controller' || target === 'postgres';
}

/** A Kafka node's restart (`broker` or `controller`). */
export function isBrokerTarget(target: ChaosTarget): target is 'broker' | 'controller' {
  return target === 'broker' || target === 'controller';
}

export interface ChaosAction {
  readonly target: ChaosTarget;
  readonly signal: 'SIGKILL' | 'SIGTERM';
}

export interface FaultMix {
  /** Share of money operations answered 503 before processing. */
  readonly failBefore: number;
  /** Share of money operations processed whose reply is lost (connection dropped). */
  readonly replyLost: number;
  /** Share of callback delivery attempts dropped (the sandbox retries). */
  readonly callbackDrop: number;
  readonly callbackDuplicate: number;
  readonly callbackReorder: number;
  /** Share of status queries answered 503. */
  readonly statusFail: number;
  /** Share of status queries answered after `statusLatencyMs`. */
  readonly statusSlow: number;
  readonly statusLatencyMs: number;
  /** Share of status queries refused with 403 (no evidence either way). */
  readonly statusRefused: number;
  /**
   * Share of money operations slow to arrive (processed after `gatewayTimeoutMs` + 2 s, the
   * adapter has given up on them by then), and slow to answer (processed at once, the answer
   * after that long).
   */
  readonly slowArrival: number;
  readonly slowAnswer: number;
  /** The adapter's GATEWAY_RESPONSE_TIMEOUT_MS in the run; the slow faults exceed it. */
  readonly gatewayTimeoutMs: number;
}

export interface ChaosConfig {
  readonly commands: number;
  readonly ratePerSecond: number;
  /** Seeds the workload and the sandbox's fault draws: same seed, same run. */
  readonly seed: number;
  /** Spread evenly over the sending, in this order. */
  readonly actions: readonly ChaosAction[];
  readonly faults: FaultMix;
  /** Upper bound of the quiet phase after the last command. */
  readonly quietMaxSeconds: number;
  /** The orchestrator's NEVER_RECEIVED_RESEND_SECONDS for the run. */
  readonly neverReceivedSeconds: number;
  /**
   * The orchestrator's UNKNOWN_ALERT_SECONDS for the run (production: an hour): short enough that
   * an outcome nothing can resolve (a hosted form whose address was lost with its reply) is
   * raised for a person within the quiet phase, so "silent" means silent.
   */
  readonly unknownAlertSeconds: number;
  /** Sales with the sandbox's deliberately unknown card (CVV 217): they stay unknown. */
  readonly unknownCards: number;
  /** The sandbox's processing delay per operation. */
  readonly gatewayDelayMs: number;
  readonly logLevel: string;
  /**
   * The stack restarts an app whose /health/live fails 3 times in a row, asked every this many
   * ms (what Kubernetes does with deploy/helm's probe, faster); 0: never.
   */
  readonly livenessPeriodMs: number;
  /** Replicas of the orchestrator, the adapter and callback-ingest (the Helm chart runs 2). */
  readonly replicas: number;
  /**
   * The orchestrator's PAYOUT_LIMITS dailyLimitMinor (payouts and transfers share it per endpoint,
   * currency and UTC day): low enough that the run reaches it, so refusals are part of the mix.
   */
  readonly payoutDailyLimitMinor: number;
  /** How long a registered two-step payout awaits approval; the unapproved ones expire within it. */
  readonly approvalWindowSeconds: number;
  /**
   * The adapter's database out this long (connections refused and cut), once, half-way through the
   * sending: the adapter's handler retries run out and gateway requests (or results) in flight
   * are dead-lettered (issue #32 item 8: every operation sent must still end final or alerted).
   * 0 or unset: none.
   */
  readonly adapterDatabaseOutageSeconds?: number;
  /**
   * The population phase (issue #38 item 3; on by default): `max(min, share × commands)` payments
   * interleaved with the workload, every other one left processing by the sandbox for good, the
   * others 3-D Secure sales whose payer leaves the ACS page; the adapter's status budget set as a
   * real gateway's; every ledger movement's time to truth bounded. Unset: none.
   */
  readonly population?: PopulationConfig;
  /**
   * What the sandbox does with a reused client_orderid, and what the orchestrator is told
   * (`refuse`: the sandbox's endpoints in `GATEWAY_REFUSES_REUSED_ORDER_ID_ENDPOINTS`); unset: `CHAOS_REUSED_CLIENT_ORDER_ID`.
   */
  readonly reusedClientOrderId?: ReusedClientOrderId;
  /**
   * Sagas that may end unknown with the alert raised (the deliberate CVV 217 ones aside), as a
   * share of the run's sagas; above it the run fails. Unset: `DEFAULT_MAX_ALERTED_SHARE`.
   */
  readonly maxAlertedShare?: number;
  /**
   * Recurring schedules (scripts/chaos/schedules.ts): a phase after the main workload's
   * quiescence with both clocks moved forward, its own kills and aimed faults; unset: none.
   */
  readonly schedules?: ScheduleWorkload;
  /**
   * The day close at the end (scripts/chaos/day-close.ts, issue #35): the orchestrator's clock
   * moved past the run's last day, every merchant's days closed by an operator, the close reports
   * judged. On by default in `npm run chaos` (`--no-day-close` or `--day-close=false` turns it
   * off), off in the chaos e2e inside `npm test` unless CHAOS_DAY_CLOSE=1
   * ({@link dayCloseRequested}): there it adds minutes to the longest suite (test/chaos.md).
   * Off: the stack runs as it did without it.
   */
  readonly dayClose?: boolean;
}

/** The flag that turns the day close on (`--day-close`, or CHAOS_DAY_CLOSE=1). */
export const DAY_CLOSE_FLAG = 'day-close';

/**
 * Whether a run closes its days ({@link ChaosConfig.dayClose}), pure: `--day-close` (or
 * `--day-close=true|1`) on, `--no-day-close` (or `--day-close=false|0`) off, else the
 * environment's CHAOS_DAY_CLOSE (`1`/`true` on, `0`/`false` off), else `byDefault` — on for the
 * standalone `npm run chaos` (scripts/chaos/main.ts), off for the chaos e2e inside `npm test`.
 * The flag wins, as every chaos option's; the last flag wins over an earlier one.
 */
export function dayCloseRequested(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  byDefault = false,
): boolean {
  const flag = argv.findLast(
    (a) =>
      a === `--${DAY_CLOSE_FLAG}` ||
      a.startsWith(`--${DAY_CLOSE_FLAG}=`) ||
      a === `--no-${DAY_CLOSE_FLAG}`,
  );
  const value =
    flag === undefined
      ? env.CHAOS_DAY_CLOSE
      : flag === `--no-${DAY_CLOSE_FLAG}`
        ? 'false'
        : flag.includes('=')
          ? flag.slice(flag.indexOf('=') + 1)
          : 'true';
  if (value === '1' || value === 'true') return true;
  if (value === '0' || value === 'false') return false;
  return byDefault;
}

export interface PopulationConfig {
  readonly share: number;
  readonly min: number;
  /** The gateway's status queries per second per endpoint (the adapter's budget is set to it). */
  readonly statusBudgetPerSecond: number;
  /** p99 of the time to truth of movements whose callback arrived (issue #38: 10 s). */
  readonly callbackP99Seconds: number;
  /** Callbacks lost: every movement reported within the no-trace window + this (30 s). */
  readonly lostSlackSeconds: number;
  /** The run quiet (but the population) within this after the last command (120 s). */
  readonly quietWithinSeconds: number;
  /**
   * At least this many movements must be judged against the bounds (made outside every
   * disruption window), or the run fails: a bound checked on nothing is no check. The e2e's short
   * run, mostly inside its disruptions' windows, sets 0; the standalone run 200.
   */
  readonly minJudged: number;
}

export const DEFAULT_POPULATION: PopulationConfig = {
  share: 0.1,
  min: 300,
  statusBudgetPerSecond: 4,
  callbackP99Seconds: 10,
  lostSlackSeconds: 30,
  quietWithinSeconds: 120,
  minJudged: 200,
};

export type ReusedClientOrderId = 'charge-again' | 'refuse';

/**
 * The chaos suite's one setting for a reused client_orderid: `charge-again` (the sandbox charges a
 * resent opening operation a second time, visibly in the ledger; the orchestrator is told so and
 * never resends an opening operation the gateway has no trace of). Flip it here, once, for every
 * run (`npm run chaos`, the e2e); `--reused-client-order-id` overrides it for one run.
 */
export const CHAOS_REUSED_CLIENT_ORDER_ID: ReusedClientOrderId = 'charge-again';

/**
 * The share of sagas that may end alerted: with 5 % 503s before processing in `charge-again`
 * mode, ≈ 6–8 % end `no-trace` (measured: 70 of 1,235 in a default run; 10 of 128 in the e2e
 * with the hosted forms and #32's faults), and every opening request the adapter's database
 * outage dead-letters ends `no-trace` too once its result deadline passes (no safe repeat: 5 in
 * the e2e's 133 payments, 17 alerted in all on 2026-11-29). Above it, something new leaves
 * payments to a person.
 */
export const DEFAULT_MAX_ALERTED_SHARE = 0.18;

/** The bound on alerted sagas of a run of `sagas` sagas. */
export function alertedBound(config: ChaosConfig, sagas: number): number {
  return Math.floor((config.maxAlertedShare ?? DEFAULT_MAX_ALERTED_SHARE) * sagas);
}

export const DEFAULT_FAULTS: FaultMix = {
  failBefore: 0.05,
  replyLost: 0.05,
  callbackDrop: 0.1,
  callbackDuplicate: 0.1,
  callbackReorder: 0.05,
  statusFail: 0.1,
  statusSlow: 0.05,
  statusLatencyMs: 1_500,
  statusRefused: 0.05,
  slowArrival: 0.03,
  slowAnswer: 0.03,
  gatewayTimeoutMs: 3_000,
};

export interface ActionRecord extends ChaosAction {
  readonly at: number;
  /** The Kafka node restarted (1–3 on a cluster, 1 on a single broker), or PostgreSQL's killed node. */
  readonly node?: number;
  /** When the replacement was spawned (app) or the broker was up again. */
  readonly backAt: number;
  /**
   * ms from the signal to: the replacement replica answering /health/ready (an app: its other
   * replica kept working meanwhile, so the topics cannot tell when this one is back), or the
   * first event published after the broker was up again.
   */
  recoveryMs?: number;
}

export interface ChaosReport {
  readonly config: ChaosConfig;
  /** Sending: first to last command; quiet: last command to quiescence (or the bound). */
  readonly seconds: { readonly sending: number; readonly quiet: number };
  /** Events by type (outcome-unknown, operation-resent … show the faults at work). */
  readonly eventTypes: Record<string, number>;
  /**
   * Cases left for a person at the end (issue 33): open, proposed or reopened; with evidence; the
   * sagas those with evidence are about (a saga alerted and in none of them is in limbo).
   */
  readonly openCases?: {
    readonly open: number;
    readonly withEvidence: number;
    readonly sagasWithEvidence?: readonly string[];
  };
  /**
   * Per scenario: payments started, completed (every step sent, the last one answered) and ended
   * early (a step declined, failed or rejected, or still not final), and the commands left unsent.
   */
  readonly scenarios: Record<
    string,
    { started: number; completed: number; endedEarly: number; unsent: number }
  >;
  /** Callback delivery attempts, and how many of them a fault dropped. */
  readonly callbackAttempts: { readonly total: number; readonly dropped: number };
  /**
   * The scripted payers (3-D Secure challenge) and payees (payout form) by what they did, and the
   * ones whose page or submission went wrong (named: a payer who could not act is no test).
   */
  readonly payers: {
    readonly byAnswer: Record<string, number>;
    readonly failed: { readonly sagaId: string; readonly error: string }[];
    /** Times the sandbox's clock was moved past its ACS window for the abandoned challenges. */
    acsWindowsExpired: number;
  };
  /** Per scenario: how its scenarios ended (last step sent → ending event), e.g. what a rebill got. */
  readonly scenarioEnds: Record<string, Record<string, number>>;
  readonly quiescent: boolean;
  readonly checks: RunChecks;
  readonly actions: ActionRecord[];
  /** Dead letters per topic, but those of the injected database outage. */
  readonly dlq: Record<string, number>;
  /**
   * The adapter's database outage (epoch ms) and the dead letters written while it lasted (and
   * for the handler's retries after it): expected, not a zero line; their sagas are judged like
   * any other (final or alerted, by the ledger).
   */
  readonly outage?: {
    readonly from: number;
    readonly to: number;
    readonly dlq: Record<string, number>;
  };
  readonly outboxBacklog: number;
  /** Apps the liveness supervisor restarted (a crashed consumer, …) and what /health/live said. */
  readonly livenessRestarts: { app: string; at: number; answer: string }[];
  /** The population phase's verdict: time to truth per family, the status budget, its size. */
  readonly truth?: TimeToTruth & {
    readonly status: { readonly problems: Problem[]; readonly maxPerSecond: number };
    readonly population: { readonly processing: number; readonly abandon: number };
  };
  /** Event-topic messages the reader (contracts' schemas, FLOW_FAMILIES) could not parse. */
  readonly invalidEvents: number;
  /** The first of them, with the schema's reason. */
  readonly unreadable: readonly string[];
  /** Messages the stack's live event reader (EventCollector) could not parse. */
  readonly collectorInvalid: number;
  readonly audit: AuditReport;
  readonly workDir: string;
  /** The schedule phase and its verdict, when the run had one. */
  readonly schedules?: { readonly phase: SchedulePhase; readonly checks: ScheduleChecks };
  /** Each loss of the PostgreSQL primary (`postgres` actions) and its recovery figures. */
  readonly failovers?: readonly FailoverRecord[];
  /**
   * The day close at the end (scripts/chaos/day-close.ts): every merchant's days of the run closed
   * by the operator, the close reports and their verdict; or why it could not be done.
   */
  readonly dayClose?: DayCloseResult | { readonly error: string };
}

/** A loss of the PostgreSQL primary and what followed (wall clock, epoch ms). */
export interface FailoverRecord {
  readonly killedAt: number;
  /** The node killed and the port of the primary after it. */
  readonly killedNode: number;
  readonly newPrimaryPort?: string;
  /** A client of the multi-host URL got a writable connection again. */
  readonly writableAt?: number;
  /** The killed node rejoined as a synchronous standby (`pg-ha.sh rejoin`, then `heal`). */
  readonly rejoinedAt?: number;
  /** What went wrong in the failover itself (no new primary, the rejoin failed). */
  readonly error?: string;
  /** From the run's events (failover-figures.ts). */
  figures?: FailoverFigures;
}

export interface FailoverFigures {
  /** ms from the kill to a writable primary. */
  readonly noWritableMs?: number;
  /** ms from the kill to the first sale sent after it reported final (by its event's broker time). */
  readonly firstSaleFinalMs?: number;
  /**
   * ms from the kill until every command sent from the kill until a writable primary was back had
   * its first event (the commands that arrived with no primary: the backlog), and how many.
   */
  readonly backlogDrainedMs?: number;
  readonly backlogCommands: number;
}

/**
 * The replicated PostgreSQL of a run with `postgres` actions (deploy/local/postgres-ha/pg-ha.sh,
 * only called: scripts/chaos/replicated-database.ts).
 */
export interface ReplicatedDatabase {
  /** SIGKILLs the primary's keeper and postmaster; returns the node killed (1 or 2). */
  killPrimary(): Promise<number>;
  /** The current primary's port, or '' while there is none. */
  primaryPort(): Promise<string>;
  /** The node's keeper started again (it rejoins as a standby), then waits for sync replication. */
  rejoin(node: number): Promise<void>;
  /** A single-host URL of the current primary for the database `url` names (tools that read one host). */
  primaryUrl(url: string): Promise<string>;
  /** True once a client of the multi-host URL can write. */
  writable(url: string): Promise<boolean>;
}

export interface ChaosEnvironment {
  readonly broker: OwnBroker;
  /** The run's replicated PostgreSQL (needed by `postgres` actions); unset: a single server. */
  readonly database?: ReplicatedDatabase;
  readonly orchestratorDatabaseUrl: string;
  readonly adapterDatabaseUrl: string;
  readonly workDir?: string;
  readonly log: (line: string) => void;
}

/**
 * The sandbox faults of a run, in the order that matters: the first rule that hits applies, so
 * each rule of a kind draws among what the rules before it left (`share / left`), and each share
 * is of all matching requests.
 */
export function faultRules(mix: FaultMix): FaultRule[] {
  const slow = mix.gatewayTimeoutMs + 2_000;
  const chained = (shares: ReadonlyArray<[number, FaultRule]>): FaultRule[] => {
    let left = 1;
    return shares.map(([share, rule]) => {
      const probability = left > 0 ? Math.min(1, share / left) : 0;
      left -= share;
      return { ...rule, probability };
    });
  };
  return [
    ...chained([
      [mix.failBefore, { failBefore: 503 }],
      [mix.replyLost, { failAfter: 'drop' }],
      [mix.slowArrival, { latencyMs: slow }],
      [mix.slowAnswer, { latencyAfterMs: slow }],
    ]),
    ...chained([
      [mix.statusFail, { operation: 'STATUS', failBefore: 503 }],
      [mix.statusRefused, { operation: 'STATUS', failBefore: 403 }],
      [mix.statusSlow, { operation: 'STATUS', latencyMs: mix.statusLatencyMs }],
    ]),
    { probability: mix.callbackDrop, callbacks: 'drop' },
    { probability: mix.callbackDuplicate, callbacks: 'duplicate' },
    { probability: mix.callbackReorder, callbacks: 'reorder' },
  ];
}
