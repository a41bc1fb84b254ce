import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { Kafka } from 'kafkajs';
import { Client } from 'pg';
import {
  AnyTransferCommand,
  parseEvent,
  parsePayoutEvent,
  parseTransferEvent,
  CardReferenceCommand,
  PaymentCommand,
  PayoutCommand,
  RebillCommand,
  ScheduleEvent,
  TOPICS,
} from '@payments/contracts';
import { auditCardData, AuditReport } from '../stack/card-data-audit';
import type { OwnBroker } from '../stack/infra';
import { kafkaClient, listTopics, scanTopics, topicEndOffsets } from '../stack/kafka-io';
import {
  PaymentStack,
  ReplicaName,
  replicaOf,
  SANDBOX_MERCHANT,
  sandboxMerchantsWithDelay,
  TEST_CARD_NUMBER,
} from '../stack/payment-stack';
import {
  answerChallengeOverHttp,
  ChallengeAnswer,
  completePayoutFormOverHttp,
} from '../stack/payer-http';
import {
  approvePayout,
  oneStepPayout,
  payoutCheck,
  payoutForm,
  transfer,
  transferByRef,
} from '../stack/payout-commands';
import { RUN_DIR, sleep } from '../stack/processes';
import { FaultRule } from '../stack/sandbox-controls';
import {
  checkRun,
  CommandType,
  ObservedEvent,
  RunChecks,
  SagaEvent,
  sagaIdOf,
  SentCommand,
} from './checks';
import {
  checkSchedules,
  formatSchedules,
  GATEWAY_CHARGE_GRACE_SECONDS,
  ObservedScheduleEvent,
  runSchedulePhase,
  ScheduleChecks,
  scheduleEnv,
  SchedulePhase,
  ScheduleWorkload,
  scheduleZeroLines,
} from './schedules';

/**
 * The chaos run: mixed commands at a steady rate on `replicas` replicas of every app while single
 * replicas are SIGKILLed and SIGTERMed, the broker restarts and the sandbox injects faults by percentage with a fixed seed;
 * then quiet until quiescence (bounded), the verdict of `checks.ts`, recovery times and the
 * card-data audit. `npm run chaos` (scripts/chaos/main.ts) and test/e2e/chaos.e2e-spec.ts use it.
 */
export type ChaosTarget = Exclude<ReplicaName, 'gateway-sandbox'> | 'broker';

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
   * Recurring schedules (scripts/chaos/schedules.ts): a phase after the main workload's
   * quiescence with both clocks moved forward, its own kills and aimed faults; unset: none.
   */
  readonly schedules?: ScheduleWorkload;
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
  readonly dlq: Record<string, number>;
  readonly outboxBacklog: number;
  /** Apps the liveness supervisor restarted (a crashed consumer, …) and what /health/live said. */
  readonly livenessRestarts: { app: string; at: number; answer: string }[];
  readonly invalidEvents: number;
  readonly audit: AuditReport;
  readonly workDir: string;
  /** The schedule phase and its verdict, when the run had one. */
  readonly schedules?: { readonly phase: SchedulePhase; readonly checks: ScheduleChecks };
}

export interface ChaosEnvironment {
  readonly broker: OwnBroker;
  readonly orchestratorDatabaseUrl: string;
  readonly adapterDatabaseUrl: string;
  readonly workDir?: string;
  readonly log: (line: string) => void;
}

/**
 * What the payer does at the page the saga's action-required names: the ACS challenge of a 3-D
 * Secure sale (pass, fail with a wrong password, cancel, or leave the page), or the hosted payout
 * form the payee fills in.
 */
type PayerPlan = Exclude<ChallengeAnswer, 'hinted-password'> | 'pass' | 'payee';

/**
 * Workload: one scenario per saga (a card payment, a payout or a transfer), a chain of commands,
 * each after the previous succeeded; a rebill step starts a saga of its own on the card reference
 * an earlier step made.
 */
interface Step {
  readonly type: CommandType;
  readonly cvv?: string;
  /** The merchant endpoint; the plain one (no 3-D Secure) when unset. */
  readonly endpointId?: string;
  /** A scripted payer (or payee) acts on the step's action-required page over HTTP. */
  readonly payer?: PayerPlan;
  /** The sandbox gives this operation of the step's saga a declined outcome once (e.g. REBILL). */
  readonly declinedOnce?: string;
  /** Fraction of the payment's amount (partial capture/return); whole when unset. */
  readonly part?: number;
  /** The events that let the next step go (or complete the scenario); default SUCCESS[type]. */
  readonly until?: readonly string[];
  /** Events that end the scenario early besides ENDS (the step went otherwise than planned). */
  readonly ends?: readonly string[];
  /** The sandbox declines this payment's next capture once (an `outcome` fault). */
  readonly captureDeclinedOnce?: boolean;
}

const SCENARIOS: ReadonlyArray<{ name: string; weight: number; steps: Step[] }> = [
  { name: 'sale approved', weight: 28, steps: [{ type: 'sale', cvv: '123' }] },
  { name: 'sale declined', weight: 10, steps: [{ type: 'sale', cvv: '116' }] },
  { name: 'sale → void', weight: 6, steps: [{ type: 'sale', cvv: '123' }, { type: 'void' }] },
  { name: 'sale → return', weight: 5, steps: [{ type: 'sale', cvv: '123' }, { type: 'return' }] },
  {
    name: 'sale → partial return',
    weight: 5,
    steps: [
      { type: 'sale', cvv: '123' },
      { type: 'return', part: 0.4 },
    ],
  },
  { name: 'preauth declined', weight: 4, steps: [{ type: 'preauth', cvv: '209' }] },
  {
    name: 'preauth → capture',
    weight: 12,
    steps: [{ type: 'preauth', cvv: '123' }, { type: 'capture' }],
  },
  {
    name: 'preauth → partial capture',
    weight: 12,
    steps: [
      { type: 'preauth', cvv: '123' },
      { type: 'capture', part: 0.6 },
    ],
  },
  { name: 'preauth → void', weight: 9, steps: [{ type: 'preauth', cvv: '123' }, { type: 'void' }] },
  {
    name: 'preauth → capture → partial return',
    weight: 9,
    steps: [{ type: 'preauth', cvv: '123' }, { type: 'capture' }, { type: 'return', part: 0.5 }],
  },
  {
    name: 'sale → two partial returns',
    weight: 4,
    steps: [
      { type: 'sale', cvv: '123' },
      { type: 'return', part: 0.3 },
      { type: 'return', part: 0.3 },
    ],
  },
  {
    name: 'preauth → capture declined → capture',
    weight: 4,
    steps: [
      { type: 'preauth', cvv: '123' },
      { type: 'capture', captureDeclinedOnce: true, until: ['declined'], ends: ['captured'] },
      { type: 'capture' },
    ],
  },
  { name: 'payout (v2)', weight: 4, steps: [{ type: 'payout' }] },
  { name: 'payout (v4)', weight: 4, steps: [{ type: 'payout-v4' }] },
  {
    name: 'payout-check → approve → pay',
    weight: 5,
    steps: [{ type: 'payout-check' }, { type: 'approve-payout' }],
  },
  {
    name: 'payout-check, left to expire',
    weight: 2,
    steps: [{ type: 'payout-check', until: ['payout-expired'] }],
  },
  { name: 'transfer', weight: 5, steps: [{ type: 'transfer', cvv: '123' }] },
  {
    name: '3-D Secure sale, challenge passed',
    weight: 5,
    steps: [
      { type: 'sale', cvv: '321', endpointId: SANDBOX_MERCHANT.threeDsEndpoint, payer: 'pass' },
    ],
  },
  {
    name: '3-D Secure sale, wrong password',
    weight: 2,
    steps: [
      {
        type: 'sale',
        cvv: '321',
        endpointId: SANDBOX_MERCHANT.threeDsEndpoint,
        payer: 'wrong-password',
        until: ['declined'],
        ends: ['approved'],
      },
    ],
  },
  {
    name: '3-D Secure sale, challenge cancelled',
    weight: 2,
    steps: [
      {
        type: 'sale',
        cvv: '321',
        endpointId: SANDBOX_MERCHANT.threeDsEndpoint,
        payer: 'cancel',
        until: ['declined'],
        ends: ['approved'],
      },
    ],
  },
  {
    // Nothing tells the service the payer left: it polls, and the ACS declines the sale once its
    // challenge window is over ("3-D Secure not completed in time"); the run moves the sandbox's
    // clock past that window when only these are left open.
    name: '3-D Secure sale, payer abandons',
    weight: 2,
    steps: [
      {
        type: 'sale',
        cvv: '321',
        endpointId: SANDBOX_MERCHANT.threeDsEndpoint,
        payer: 'abandon',
        until: ['declined'],
        ends: ['approved'],
      },
    ],
  },
  {
    name: 'sale → card ref → rebill → rebill declined',
    weight: 4,
    steps: [
      { type: 'sale', cvv: '123' },
      { type: 'create-card-ref' },
      { type: 'rebill' },
      { type: 'rebill', declinedOnce: 'REBILL', until: ['declined'], ends: ['approved'] },
    ],
  },
  { name: 'transfer-by-ref', weight: 3, steps: [{ type: 'transfer-by-ref' }] },
  {
    name: 'payout form, payee completes',
    weight: 3,
    steps: [{ type: 'payout-form', payer: 'payee' }],
  },
];

/**
 * The scenarios every run starts first, one each, before the seeded draw: the flows a small run
 * might otherwise never draw.
 */
const GUARANTEED_FIRST = [
  '3-D Secure sale, challenge passed',
  '3-D Secure sale, wrong password',
  '3-D Secure sale, challenge cancelled',
  '3-D Secure sale, payer abandons',
  'sale → card ref → rebill → rebill declined',
  'transfer-by-ref',
  'payout form, payee completes',
];

/** The event that lets a scenario's next step go: the previous step succeeded. */
const SUCCESS: Record<CommandType, string> = {
  sale: 'approved',
  preauth: 'authorized',
  capture: 'captured',
  void: 'voided',
  return: 'returned',
  payout: 'paid-out',
  'payout-v4': 'paid-out',
  'payout-check': 'payout-registered',
  'approve-payout': 'paid-out',
  transfer: 'transferred',
  'create-card-ref': 'card-ref-created',
  rebill: 'approved',
  'transfer-by-ref': 'transferred',
  'payout-form': 'paid-out',
};

/**
 * Events after which a scenario sends nothing more: the step did not succeed, or the saga is
 * final otherwise (an approval refused by the daily limit leaves the payout awaiting approval,
 * which ends with `payout-expired`).
 */
const ENDS = new Set<string>([
  'declined',
  'failed',
  'command-rejected',
  'payout-declined',
  'payout-failed',
  'payout-refused',
  'payout-rejected',
  'payout-expired',
  'payout-command-rejected',
  'transfer-declined',
  'transfer-failed',
  'transfer-refused',
  'transfer-command-rejected',
  'card-reference-failed',
]);

/** An unknown outcome raised for a person (no trace and no safe repeat): nothing more happens. */
const ALERTED = new Set<string>([
  'outcome-unknown',
  'payout-outcome-unknown',
  'transfer-outcome-unknown',
  'card-reference-unknown',
]);

/** The sandbox's ACS challenge window (its challengeTimeoutMs), and a second past it. */
const ACS_WINDOW_SECONDS = 601;

/** An open saga with no event for this long is stalled (awaits nothing the run will bring). */
const STALLED_MS = 60_000;

interface Scenario {
  readonly paymentId: string;
  readonly name: string;
  readonly steps: readonly Step[];
  readonly amountMinor: number;
  /** Index of the next step to send. */
  next: number;
  /** The next step may be sent (the previous one succeeded). */
  ready: boolean;
  /** Ended: every step sent and done, or a step did not succeed. */
  ended: boolean;
  /** The highest event version seen: a redelivered earlier event decides nothing again. */
  seenVersion: number;
  /** The saga the last step sent went to: the scenario's own, or a rebill's. */
  saga: string;
  /**
   * The rebill steps' saga ids, drawn with the scenario (a draw at send time would depend on
   * timing, and the seed would no longer give one workload), and how many were used.
   */
  readonly rebillSagas: readonly string[];
  rebills: number;
  /** The card reference an earlier step made (card-ref-created). */
  cardRefId?: string;
  /** The payer of the last step has been sent to its page (once per step). */
  payerStarted?: boolean;
  /** The payer left the ACS page without an answer: only the ACS window ends the sale. */
  abandoned?: boolean;
  /** When the current saga last said anything (ms): a saga silent for long is stalled. */
  lastEventAt?: number;
  /** The last step sent and the event that ended the scenario (`sale → declined: …`). */
  endedBy?: string;
}

/** An ending event as the report names it: a decline with the gateway's message. */
function endOf(event: SagaEvent): string {
  return event.type === 'declined' && event.message ? `declined: ${event.message}` : event.type;
}

/**
 * A UUID v4 drawn from the seeded generator: payment ids are the sandbox's client_orderid, which
 * keys its fault draws, so the same seed hits the same payments with the same faults.
 */
function seededUuid(random: () => number): string {
  const bytes = Array.from({ length: 16 }, () => Math.floor(random() * 256));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = bytes.map((b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** mulberry32: a small seeded generator, so one seed gives one workload. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
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

const ORCHESTRATOR_INPUTS = [TOPICS.commands, TOPICS.gatewayResults, TOPICS.gatewayCallbacks];

export async function runChaos(config: ChaosConfig, env: ChaosEnvironment): Promise<ChaosReport> {
  const { log, broker } = env;
  const workDir = env.workDir ?? path.join(RUN_DIR, `chaos-${randomUUID().slice(0, 8)}`);
  mkdirSync(workDir, { recursive: true });
  for (const action of [...config.actions, ...(config.schedules?.actions ?? [])]) {
    if (action.target !== 'broker' && replicaOf(action.target).index >= config.replicas) {
      throw new Error(`action on ${action.target}: the run has ${config.replicas} replica(s)`);
    }
  }
  const random = seeded(config.seed);
  const scenarios = new Map<string, Scenario>();
  const sent: SentCommand[] = [];
  const deliberatelyUnknown = new Set<string>();

  /** Saga id → its scenario (a rebill's saga belongs to the scenario that sent it). */
  const bySaga = new Map<string, Scenario>();
  const payers: ChaosReport['payers'] = { byAnswer: {}, failed: [], acsWindowsExpired: 0 };
  const payerVisits: Promise<void>[] = [];
  const startPayer = (s: Scenario, plan: PayerPlan, url: string) => {
    const saga = s.saga;
    const visit =
      plan === 'payee'
        ? completePayoutFormOverHttp(url, {
            number: TEST_CARD_NUMBER,
            holder: 'JANE DOE',
            month: '12',
            year: '2030',
          })
        : answerChallengeOverHttp(url, plan === 'pass' ? 'hinted-password' : plan);
    payerVisits.push(
      visit.then(
        () => {
          payers.byAnswer[plan] = (payers.byAnswer[plan] ?? 0) + 1;
          if (plan === 'abandon') s.abandoned = true;
        },
        (error: unknown) => {
          payers.failed.push({ sagaId: saga, error: (error as Error).message });
          log(`payer of ${saga} (${plan}) failed: ${(error as Error).message}`);
        },
      ),
    );
  };

  const onEvent = (event: SagaEvent) => {
    const s = bySaga.get(sagaIdOf(event));
    if (!s || sagaIdOf(event) !== s.saga) return;
    s.lastEventAt = Date.now();
    if (event.type === 'card-ref-created') s.cardRefId ??= event.cardRef.refId;
    if (s.ended || s.ready || s.next === 0 || event.version <= s.seenVersion) return;
    s.seenVersion = event.version;
    const last = s.steps[s.next - 1];
    if (
      last.payer !== undefined &&
      !s.payerStarted &&
      (event.type === 'action-required' || event.type === 'payout-action-required') &&
      event.action.kind === 'redirect'
    ) {
      s.payerStarted = true;
      startPayer(s, last.payer, event.action.url);
    }
    if ((last.until ?? [SUCCESS[last.type]]).includes(event.type)) {
      if (s.next >= s.steps.length) s.ended = true;
      else s.ready = true;
    } else if (
      ENDS.has(event.type) ||
      last.ends?.includes(event.type) ||
      (ALERTED.has(event.type) && 'alert' in event && event.alert)
    ) {
      s.ended = true;
    }
    if (s.ended) s.endedBy = `${last.type} → ${endOf(event)}`;
  };

  // On a cluster the apps create their topics replicated (RF 3, min ISR 2) and write with acks=all.
  const replication: Record<string, string> = broker.cluster
    ? { KAFKA_REPLICATION_FACTOR: '3', KAFKA_MIN_INSYNC_REPLICAS: '2' }
    : {};
  const stack = await PaymentStack.start(
    {
      kafkaBrokers: broker.brokers,
      orchestratorDatabaseUrl: env.orchestratorDatabaseUrl,
      adapterDatabaseUrl: env.adapterDatabaseUrl,
      workDir,
      logLevel: config.logLevel,
      replicas: config.replicas,
      // The schedule phase moves the orchestrator's clock while it kills replicas.
      restoreOrchestratorClock: true,
      env: {
        'gateway-sandbox': {
          SANDBOX_MERCHANTS_FILE: sandboxMerchantsWithDelay(workDir, config.gatewayDelayMs),
        },
        orchestrator: {
          ...replication,
          NEVER_RECEIVED_RESEND_SECONDS: String(config.neverReceivedSeconds),
          UNKNOWN_ALERT_SECONDS: String(config.unknownAlertSeconds),
          PAYOUT_LIMITS: JSON.stringify({
            default: {
              maxMinor: 100_000_000,
              dailyLimitMinor: config.payoutDailyLimitMinor,
              approvalWindowSeconds: config.approvalWindowSeconds,
            },
          }),
          // The sandbox below charges a reused client_orderid again: told so, the orchestrator
          // never repeats a payment the gateway shows no trace of (it alerts a person instead).
          GATEWAY_REFUSES_REUSED_ORDER_ID: 'false',
          ...(config.schedules === undefined ? {} : scheduleEnv()),
        },
        'gateway-adapter': {
          ...replication,
          GATEWAY_RESPONSE_TIMEOUT_MS: String(config.faults.gatewayTimeoutMs),
        },
        'callback-ingest': replication,
      },
    },
    (received) => {
      // Payout budget and PAN-eligibility events belong to no scenario.
      const event = received.event;
      if ('budgetId' in event || 'checkId' in event) return;
      onEvent(event);
    },
  );
  const kafka = kafkaClient(broker.brokers, 'chaos');
  const actions: ActionRecord[] = [];
  try {
    if (config.livenessPeriodMs > 0) stack.superviseLiveness(config.livenessPeriodMs, 3);
    await stack.controls.reset();
    await stack.controls.changeSettings({
      faultSeed: config.seed,
      reusedClientOrderId: 'charge-again',
    });
    for (const rule of faultRules(config.faults)) await stack.controls.addFault(rule);

    type AnyCommand = PaymentCommand | PayoutCommand | AnyTransferCommand | CardReferenceCommand;
    const sagaOf = (command: AnyCommand) =>
      'paymentId' in command
        ? command.paymentId
        : 'transferId' in command
          ? command.transferId
          : command.payoutId;
    const send = async (command: AnyCommand, type: CommandType, cardRefId?: string) => {
      // The broker may be restarting: the same command again (same commandId) until it is taken.
      for (let attempt = 1; ; attempt++) {
        try {
          await stack.sendRaw(command);
          break;
        } catch (error) {
          if (attempt >= 240) throw error;
          await sleep(500);
        }
      }
      sent.push({
        commandId: command.commandId,
        paymentId: sagaOf(command),
        type,
        sentAt: Date.now(),
        ...(cardRefId === undefined ? {} : { cardRefId }),
      });
    };
    const commandOf = (s: Scenario, step: Step): AnyCommand => {
      const amount = step.part ? Math.max(1, Math.round(s.amountMinor * step.part)) : undefined;
      const payout = { payoutId: s.paymentId, amountMinor: s.amountMinor };
      switch (step.type) {
        case 'sale':
          return stack.sale({
            paymentId: s.paymentId,
            cvv: step.cvv,
            amountMinor: s.amountMinor,
            endpointId: step.endpointId,
          });
        case 'preauth':
          return stack.preauth({
            paymentId: s.paymentId,
            cvv: step.cvv,
            amountMinor: s.amountMinor,
          });
        case 'capture':
          return stack.capture(s.paymentId, amount);
        case 'void':
          return stack.void(s.paymentId);
        case 'return':
          return stack.return(s.paymentId, amount);
        case 'payout':
        case 'payout-v4':
          return oneStepPayout({ ...payout, type: step.type });
        case 'payout-check':
          return payoutCheck(payout);
        case 'approve-payout':
          return approvePayout(s.paymentId);
        case 'transfer':
          return transfer({ ...payout, cvv: step.cvv });
        case 'transfer-by-ref':
          return transferByRef(payout);
        case 'payout-form':
          return payoutForm({
            ...payout,
            redirectUrl: `${stack.urls['callback-ingest']}/return/${SANDBOX_MERCHANT.plainEndpoint}`,
          });
        case 'create-card-ref':
          return {
            type: 'create-card-ref',
            commandId: randomUUID(),
            paymentId: s.paymentId,
            merchant: { endpointId: SANDBOX_MERCHANT.plainEndpoint },
            occurredAt: new Date().toISOString(),
          };
        case 'rebill': {
          const rebill: RebillCommand = {
            type: 'rebill',
            commandId: randomUUID(),
            // A saga of its own, drawn from the seed like every other: same seed, same faults.
            paymentId: s.saga,
            merchant: { endpointId: SANDBOX_MERCHANT.plainEndpoint },
            occurredAt: new Date().toISOString(),
            cardRef: { refId: s.cardRefId ?? '' },
            amount: { minor: amount ?? s.amountMinor, currency: 'USD' },
            order: { description: 'Rebill by card reference' },
          };
          return rebill;
        }
        default: {
          const never: never = step.type;
          throw new Error(`unknown step ${String(never)}`);
        }
      }
    };

    // Deliberately unknown payments first, so they are old by the end.
    for (let i = 0; i < config.unknownCards; i++) {
      const sale = stack.sale({ paymentId: seededUuid(random), cvv: '217', amountMinor: 777 + i });
      deliberatelyUnknown.add(sale.paymentId);
      await send(sale, 'sale');
    }

    let reserved = config.unknownCards;
    let guaranteed = 0;
    let lastAcsExpiry = 0;
    const totalWeight = SCENARIOS.reduce((sum, s) => sum + s.weight, 0);
    const pick = () => {
      let r = random() * totalWeight;
      for (const s of SCENARIOS) if ((r -= s.weight) < 0) return s;
      return SCENARIOS[0];
    };
    const thresholds = config.actions.map((_, i) =>
      Math.floor(((i + 1) * config.commands) / (config.actions.length + 1)),
    );
    let chaos: Promise<void> = Promise.resolve();
    let fired = 0;
    const fire = (action: ChaosAction) => {
      chaos = chaos.then(async () => {
        const at = Date.now();
        log(`chaos: ${action.signal} ${action.target}`);
        if (action.target === 'broker') {
          await broker.restart(action.signal, 1 + (fired % 3));
          actions.push({ ...action, at, backAt: Date.now() });
        } else {
          await stack.kill(action.target, action.signal);
          const backAt = Date.now();
          await stack.startAgain(action.target);
          actions.push({ ...action, at, backAt, recoveryMs: Date.now() - at });
        }
        log(`chaos: ${action.target} back after ${((Date.now() - at) / 1000).toFixed(1)} s`);
      });
    };

    const interval = 1000 / config.ratePerSecond;
    const started = Date.now();
    let lastProgress = started;
    let allStarted: number | undefined;
    let quiescent = false;
    const progress = () => {
      const values = [...scenarios.values()];
      const open = values.filter((s) => !s.ended).length;
      const phase =
        reserved < config.commands ? 'sending' : open > 0 ? 'follow-ups' : 'waiting for quiet';
      log(
        `${phase} ${((Date.now() - started) / 1000).toFixed(0)} s: sent ${sent.length}/${config.commands}, ` +
          `payments ${values.length} (${values.filter((s) => s.ended).length} ended), ` +
          `events ${stack.events.all.length}, chaos actions ${actions.length}/${config.actions.length}`,
      );
    };
    for (let tick = 0; ; tick++) {
      const due = started + tick * interval;
      if (due > Date.now()) await sleep(due - Date.now());
      while (fired < thresholds.length && reserved >= thresholds[fired]) {
        fire(config.actions[fired]);
        fired += 1;
      }
      const follow = [...scenarios.values()].find((s) => s.ready);
      if (follow) {
        follow.ready = false;
        const step = follow.steps[follow.next];
        follow.next += 1;
        if (step.type === 'rebill') {
          follow.saga = follow.rebillSagas[follow.rebills++];
          follow.seenVersion = 0;
          follow.payerStarted = false;
          bySaga.set(follow.saga, follow);
        }
        if (step.captureDeclinedOnce) {
          await stack.controls.addFault({
            clientOrderId: follow.paymentId,
            operation: 'CAPTURE',
            outcome: 'declined',
            times: 1,
          });
        }
        if (step.declinedOnce) {
          await stack.controls.addFault({
            clientOrderId: follow.saga,
            operation: step.declinedOnce,
            outcome: 'declined',
            times: 1,
          });
        }
        await send(
          commandOf(follow, step),
          step.type,
          step.type === 'rebill' ? follow.cardRefId : undefined,
        );
      } else if (reserved < config.commands) {
        // One of each guaranteed scenario first (as the budget allows), then the seeded draw.
        const first = SCENARIOS.find((s) => s.name === GUARANTEED_FIRST[guaranteed]);
        if (first) guaranteed += 1;
        let shape = first ?? pick();
        if (reserved + shape.steps.length > config.commands) shape = SCENARIOS[0];
        reserved += shape.steps.length;
        const paymentId = seededUuid(random);
        const scenario: Scenario = {
          paymentId,
          name: shape.name,
          steps: shape.steps,
          amountMinor: 100 + Math.floor(random() * 99_900),
          next: 1,
          ready: false,
          ended: false,
          seenVersion: 0,
          saga: paymentId,
          rebillSagas: shape.steps.filter((s) => s.type === 'rebill').map(() => seededUuid(random)),
          rebills: 0,
        };
        scenarios.set(scenario.paymentId, scenario);
        bySaga.set(scenario.paymentId, scenario);
        await send(commandOf(scenario, shape.steps[0]), shape.steps[0].type);
      } else {
        // Everything started: wait for the follow-ups, then for quiescence (bounded).
        if (fired === thresholds.length) await chaos;
        allStarted ??= Date.now();
        if (Date.now() - lastProgress > 5_000) {
          lastProgress = Date.now();
          progress();
        }
        const openScenarios = [...scenarios.values()].filter((s) => !s.ended);
        const open = openScenarios.length > 0;
        // Payers who left their ACS page wait for the challenge window on the sandbox's clock (10
        // minutes): it is moved past it, once nothing else is under way (every other open saga
        // silent for a minute: moving the clock cannot change what it awaits), and again if the
        // declines have not come within a minute.
        const stalled = (s: Scenario) => Date.now() - (s.lastEventAt ?? 0) > STALLED_MS;
        if (
          openScenarios.some((s) => s.abandoned) &&
          openScenarios.every((s) => s.abandoned || stalled(s)) &&
          Date.now() - lastAcsExpiry > 60_000
        ) {
          lastAcsExpiry = Date.now();
          log(`moving the sandbox's clock ${ACS_WINDOW_SECONDS} s: the abandoned ACS windows end`);
          await stack.controls.advanceClock(ACS_WINDOW_SECONDS);
          payers.acsWindowsExpired += 1;
        }
        if (!open && (await quiet(stack, kafka, env.orchestratorDatabaseUrl))) {
          quiescent = true;
          break;
        }
        const lastSent = sent.at(-1)?.sentAt ?? allStarted;
        if (Date.now() - Math.max(allStarted, lastSent) > config.quietMaxSeconds * 1000) break;
        await sleep(1_000);
        continue;
      }
      if (Date.now() - lastProgress > 5_000) {
        lastProgress = Date.now();
        progress();
      }
    }
    await chaos;
    await Promise.all(payerVisits);
    const quietEnded = Date.now();
    let phase: SchedulePhase | undefined;
    if (config.schedules !== undefined && quiescent) {
      phase = await runSchedulePhase(
        {
          stack,
          newId: () => seededUuid(random),
          random,
          faults: faultRules(config.faults),
          log,
        },
        config.schedules,
      );
      quiescent = false;
      const phaseEnded = Date.now();
      while (Date.now() - phaseEnded < config.quietMaxSeconds * 1000) {
        if (await quiet(stack, kafka, env.orchestratorDatabaseUrl)) {
          quiescent = true;
          break;
        }
        await sleep(1_000);
      }
      log(
        `schedules: ${quiescent ? 'quiescent' : 'NOT quiescent'} ${((Date.now() - phaseEnded) / 1000).toFixed(0)} s after the last step`,
      );
    }
    // Late duplicates and resends have a moment to show before the stream is judged.
    await sleep(3_000);

    log('reading every topic and the ledger...');
    const events: ObservedEvent[] = [];
    const scheduleEvents: ObservedScheduleEvent[] = [];
    let invalidEvents = 0;
    const dlq: Record<string, number> = {};
    const firstAfter = new Map<number, number>();
    const topics = await listTopics(kafka, 'payments.');
    await scanTopics(kafka, topics, (m) => {
      if (m.topic.endsWith('.dlq')) dlq[m.topic] = (dlq[m.topic] ?? 0) + 1;
      actions.forEach((a, i) => {
        if (a.target === 'broker' && m.topic === TOPICS.events && m.timestamp >= a.backAt) {
          firstAfter.set(i, Math.min(firstAfter.get(i) ?? Infinity, m.timestamp));
        }
      });
      if (m.topic !== TOPICS.events) return;
      const value: unknown = JSON.parse(m.value?.toString('utf8') ?? 'null');
      const ceId = m.headers.ce_id;
      const schedule = ScheduleEvent.safeParse(value);
      if (schedule.success && ceId) {
        scheduleEvents.push({ event: schedule.data, ceId });
        return;
      }
      const payment = parseEvent(value);
      const payout = payment.ok ? undefined : parsePayoutEvent(value);
      const moved = payment.ok || payout?.ok ? undefined : parseTransferEvent(value);
      const event = payment.ok
        ? payment.event
        : payout?.ok
          ? payout.event
          : moved?.ok
            ? moved.event
            : undefined;
      if (event === undefined || !ceId) invalidEvents += 1;
      // The payout budget is the orchestrator's own saga, started by no command of the run.
      else if (!('budgetId' in event)) events.push({ event, ceId });
    });
    actions.forEach((a, i) => {
      const first = firstAfter.get(i);
      if (a.target === 'broker' && first !== undefined) a.recoveryMs = first - a.at;
    });
    const ledger = await stack.controls.ledger();
    const attempts = (await stack.controls.callbacks()).attempts;
    const eventTypes: Record<string, number> = {};
    const seenCe = new Set<string>();
    for (const e of events) {
      if (seenCe.has(e.ceId)) continue;
      seenCe.add(e.ceId);
      eventTypes[e.event.type] = (eventTypes[e.event.type] ?? 0) + 1;
    }
    const checks = checkRun({
      commands: sent,
      events,
      ledger: ledger.entries,
      deliberatelyUnknown,
      now: Date.now(),
      dailyLimitMinor: config.payoutDailyLimitMinor,
    });
    const schedules =
      phase === undefined
        ? undefined
        : {
            phase,
            checks: checkSchedules({
              specs: phase.specs,
              scheduleEvents,
              paymentEvents: events,
              ledger: ledger.entries,
              now: Date.now() + phase.advancedSeconds * 1000,
              graceMs: GATEWAY_CHARGE_GRACE_SECONDS * 1000,
            }),
          };
    // Sagas left unknown with the alert raised are still polled, so a status request may have
    // been written a moment ago: a backlog is what the relay left behind for longer than that.
    const outboxBacklog = await outboxCount(env.orchestratorDatabaseUrl, BACKLOG_AFTER_SECONDS);
    await stack.stop();

    log('card-data audit...');
    const audit = await auditCardData({
      logDirs: [path.join(workDir, 'logs')],
      databaseUrls: [env.orchestratorDatabaseUrl, env.adapterDatabaseUrl],
      kafka,
      secrets: [SANDBOX_MERCHANT.controlKey],
    });
    return {
      config,
      seconds: {
        sending: ((sent.at(-1)?.sentAt ?? started) - started) / 1000,
        quiet: (quietEnded - (sent.at(-1)?.sentAt ?? quietEnded)) / 1000,
      },
      eventTypes,
      scenarios: summarize([...scenarios.values()]),
      callbackAttempts: {
        total: attempts.length,
        dropped: attempts.filter((a) => a.dropped).length,
      },
      payers,
      scenarioEnds: endsOf([...scenarios.values()]),
      quiescent,
      checks,
      actions,
      dlq,
      outboxBacklog,
      livenessRestarts: [...stack.livenessRestarts],
      invalidEvents,
      audit,
      workDir,
      ...(schedules === undefined ? {} : { schedules }),
    };
  } finally {
    await stack.stop();
  }
}

function summarize(scenarios: readonly Scenario[]): ChaosReport['scenarios'] {
  const out: ChaosReport['scenarios'] = {};
  for (const s of scenarios) {
    const row = (out[s.name] ??= { started: 0, completed: 0, endedEarly: 0, unsent: 0 });
    row.started += 1;
    const complete = s.ended && s.next === s.steps.length && !s.ready;
    if (complete) row.completed += 1;
    else row.endedEarly += 1;
    row.unsent += s.steps.length - s.next;
  }
  return out;
}

function endsOf(scenarios: readonly Scenario[]): ChaosReport['scenarioEnds'] {
  const out: ChaosReport['scenarioEnds'] = {};
  for (const s of scenarios) {
    const ends = (out[s.name] ??= {});
    const end = s.endedBy ?? 'not ended';
    ends[end] = (ends[end] ?? 0) + 1;
  }
  return out;
}

/** The orchestrator has handled everything on its inputs and published its whole outbox. */
async function quiet(stack: PaymentStack, kafka: Kafka, orchestratorDb: string): Promise<boolean> {
  try {
    if ((await outboxCount(orchestratorDb)) > 0) return false;
    const ends = await topicEndOffsets(kafka, ORCHESTRATOR_INPUTS);
    const admin = kafka.admin();
    await admin.connect();
    try {
      const committed = await admin.fetchOffsets({
        groupId: 'orchestrator',
        topics: [...ORCHESTRATOR_INPUTS],
      });
      for (const { topic, partitions } of committed) {
        for (const p of partitions) {
          if (Number(p.offset) < (ends.get(`${topic}/${p.partition}`) ?? 0)) return false;
        }
      }
    } finally {
      await admin.disconnect();
    }
    return (await stack.controls.callbacks()).idle;
  } catch {
    return false; // the broker or the sandbox busy for a moment: not quiet yet
  }
}

/** An unpublished outbox row older than this is a backlog, not a message on its way. */
const BACKLOG_AFTER_SECONDS = 10;

async function outboxCount(url: string, olderThanSeconds = 0): Promise<number> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<{ n: string }>(
      `SELECT count(*) AS n FROM outbox WHERE published_at IS NULL AND created_at <= now() - make_interval(secs => $1)`,
      [olderThanSeconds],
    );
    return Number(result.rows[0].n);
  } finally {
    await client.end();
  }
}

const zeroLine = (n: number) => (n === 0 ? 'ok' : 'FAIL');

/** The zero lines: each must be 0 for the run to pass. */
export function zeroLines(report: ChaosReport): Record<string, number> {
  const c = report.checks;
  return {
    'lost commands': c.lost.length,
    'double charges': c.doubleCharges.length,
    'misreported outcomes': c.misreported.length,
    'silent after quiescence (neither final nor alerted)': c.unknown.filter(
      (u) => !u.deliberate && !u.alerted,
    ).length,
    'money out over the daily limit': c.overLimit.length,
    'version gaps/duplicates': c.versionProblems.length,
    'dead letters': Object.values(report.dlq).reduce((a, b) => a + b, 0),
    'outbox backlog': report.outboxBacklog,
    'unreadable events': report.invalidEvents,
    'card-data findings': report.audit.findings.length,
    'payers and payees who could not act (page or submission failed)': report.payers.failed.length,
    ...(report.schedules === undefined ? {} : scheduleZeroLines(report.schedules.checks)),
  };
}

export function formatReport(report: ChaosReport): string {
  const c = report.checks;
  const lines: string[] = [];
  const row = (label: string, value: string | number, verdict = '') =>
    lines.push(`  ${label.padEnd(50)} ${String(value).padStart(8)}  ${verdict}`);
  lines.push(
    `chaos: ${report.config.commands} commands at ${report.config.ratePerSecond}/s, seed ${report.config.seed}; sending ${report.seconds.sending.toFixed(0)} s, quiet ${report.seconds.quiet.toFixed(0)} s (${report.quiescent ? 'quiescent' : `NOT quiescent within ${report.config.quietMaxSeconds} s`})`,
  );
  row('commands sent', c.commandsSent);
  row('payments', c.payments);
  row('payments final', c.paymentsFinal);
  row('commands rejected (reason)', c.rejected.length);
  lines.push(
    `  events: ${Object.entries(report.eventTypes)
      .map(([type, n]) => `${type} ${n}`)
      .join(', ')}`,
  );
  for (const [name, r] of Object.entries(report.scenarios)) {
    lines.push(
      `    ${name.padEnd(36)} started ${r.started}, completed ${r.completed}, ended early ${r.endedEarly}${r.unsent ? ` (${r.unsent} commands unsent)` : ''}`,
    );
  }
  lines.push(
    `  callback attempts: ${report.callbackAttempts.total}, dropped by a fault ${report.callbackAttempts.dropped}`,
  );
  lines.push('  how the payer-flow and card-reference scenarios ended (last step → event):');
  for (const name of GUARANTEED_FIRST) {
    const ends = Object.entries(report.scenarioEnds[name] ?? {});
    if (ends.length === 0) continue;
    lines.push(`    ${name}: ${ends.map(([end, n]) => `${end} ${n}`).join(', ')}`);
  }
  lines.push(
    `  scripted payers (3-D Secure) and payees (payout form): ${
      Object.entries(report.payers.byAnswer)
        .map(([answer, n]) => `${answer} ${n}`)
        .join(', ') || 'none'
    }; ACS windows ended by the sandbox's clock ${report.payers.acsWindowsExpired}×`,
  );
  for (const p of report.payers.failed.slice(0, 10))
    lines.push(`    payer of ${p.sagaId} could not act: ${p.error}`);
  const deliberate = c.unknown.filter((u) => u.deliberate);
  row('unknown, deliberate (CVV 217)', deliberate.length);
  row(
    'unknown with the alert raised (for a person)',
    c.unknown.filter((u) => !u.deliberate && u.alerted).length,
  );
  for (const [label, value] of Object.entries(zeroLines(report)))
    row(label, value, zeroLine(value));
  for (const [topic, n] of Object.entries(report.dlq)) lines.push(`    ${topic}: ${n}`);
  const show = (title: string, items: readonly { paymentId: string; detail: string }[]) => {
    for (const p of items.slice(0, 10)) lines.push(`    ${title} ${p.paymentId}: ${p.detail}`);
    if (items.length > 10) lines.push(`    … ${items.length - 10} more`);
  };
  show(
    'lost',
    c.lost.map((l) => ({ paymentId: l.paymentId, detail: `${l.type} ${l.commandId}` })),
  );
  show('double', c.doubleCharges);
  show('misreported', c.misreported);
  show('over the limit', c.overLimit);
  show('version', c.versionProblems);
  show('rejected', c.rejected);
  show(
    'unknown',
    c.unknown.map((u) => ({
      paymentId: u.paymentId,
      detail: `${u.ageSeconds} s old, last event ${u.lastEvent}${u.deliberate ? ' (deliberate)' : ''}${u.alerted ? ` (alert: ${u.concern ?? ''})` : ''}`,
    })),
  );
  if (report.schedules !== undefined)
    lines.push(...formatSchedules(report.schedules.phase, report.schedules.checks));
  lines.push(`  restarts by the liveness probe: ${report.livenessRestarts.length}`);
  for (const r of report.livenessRestarts) {
    const at = new Date(r.at).toISOString().slice(11, 23);
    lines.push(`    ${r.app} at ${at}: ${r.answer.slice(0, 160)}`);
  }
  lines.push(
    '  recovery after each action (signal → replica ready again; broker: → first event after it):',
  );
  for (const a of report.actions) {
    lines.push(
      `    ${a.signal.padEnd(8)} ${a.target.padEnd(18)} ${a.recoveryMs === undefined ? 'no output after it' : `${(a.recoveryMs / 1000).toFixed(1)} s`}`,
    );
  }
  lines.push(
    report.audit.findings.length === 0
      ? `  card-data audit: 0 findings in ${report.audit.logLines} log lines, ${report.audit.rows} rows of ${report.audit.tables} tables, ${report.audit.messages} messages on ${report.audit.topics} topics`
      : `  card-data audit: ${report.audit.findings.length} findings`,
  );
  for (const f of report.audit.findings.slice(0, 10)) {
    lines.push(`    ${f.rule} ${f.where} ${f.excerpt}`);
  }
  lines.push(`  logs and credentials: ${report.workDir}`);
  return lines.join('\n');
}

export function passed(report: ChaosReport): boolean {
  return report.quiescent && Object.values(zeroLines(report)).every((n) => n === 0);
}
