import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { sagaIdOf as contractsSagaIdOf } from '@payments/contracts';
import { auditCardData } from '../stack/card-data-audit';
import { kafkaClient } from '../stack/kafka-io';
import {
  PaymentStack,
  replicaOf,
  SANDBOX_MERCHANT,
  sandboxMerchantsWithDelay,
  TEST_CARD_NUMBER,
} from '../stack/payment-stack';
import {
  answerChallengeOverHttp,
  completeCardFormOverHttp,
  completePayoutFormOverHttp,
} from '../stack/payer-http';
import { DatabaseOutage } from '../stack/database-outage';
import { RUN_DIR, sleep } from '../stack/processes';
import { freshAdminTokens } from '../stack/console-app';
import { checkRun, CommandType, SagaEvent, sagaIdOf, SentCommand } from './checks';
import { checkSchedules } from './schedule-checks';
import { GATEWAY_CHARGE_GRACE_SECONDS, scheduleEnv, type SchedulePhase } from './schedule-plan';
import { runSchedulePhase } from './schedules';
import {
  type ClockAdvance,
  type StatusReading,
  statusBudgetExceeded,
  timeToTruth,
} from './time-to-truth';
import { sampleStatusCalls, type StatusSampler } from './status-sampler';
import { scanStream } from './stream-scan';
import {
  type ActionRecord,
  type ChaosAction,
  type ChaosConfig,
  type ChaosEnvironment,
  type ChaosReport,
  CHAOS_REUSED_CLIENT_ORDER_ID,
  type FailoverRecord,
  faultRules,
  isBrokerTarget,
  isInfrastructure,
} from './chaos-config';
import { brokerNodeFor, failoverFigures, kraftController } from './infrastructure';
import { BACKLOG_AFTER_SECONDS, openCaseCounts, outboxCount, quiet } from './quiescence';
import { COMMANDS } from './flows';
import { closeChaosDay, dayCloseEnv, type DayCloseResult } from './day-close';
import type { Step } from './flows/companion';
import {
  type AnyCommand,
  commandOf,
  ACS_WINDOW_SECONDS,
  ALERTED,
  endOf,
  ENDS,
  endsOf,
  GUARANTEED_FIRST,
  type PayerPlan,
  commandsOf,
  SCENARIOS,
  type Scenario,
  seeded,
  seededUuid,
  STALLED_MS,
  successOf,
  summarize,
} from './workload';

/** The status burst of each adapter replica in the population phase: one token, and one reserved for urgent queries. */
const STATUS_BURST_PER_REPLICA = 2;
/**
 * The chaos run: mixed commands at a steady rate on `replicas` replicas of every app while single
 * replicas are SIGKILLed and SIGTERMed, the broker restarts and the sandbox injects faults by percentage with a fixed seed;
 * then quiet until quiescence (bounded), the schedule phase, the verdict of `checks.ts`,
 * recovery times, the day close last when asked for (`config.dayClose`, `day-close.ts`: the
 * orchestrator's clock moved past the run's last day, every merchant's days closed by an operator,
 * the close report judged) and the
 * card-data audit. `npm run chaos` (scripts/chaos/main.ts) and test/e2e/chaos.e2e-spec.ts use it.
 */
export async function runChaos(config: ChaosConfig, env: ChaosEnvironment): Promise<ChaosReport> {
  const { log, broker } = env;
  const workDir = env.workDir ?? path.join(RUN_DIR, `chaos-${randomUUID().slice(0, 8)}`);
  mkdirSync(workDir, { recursive: true });
  for (const action of [...config.actions, ...(config.schedules?.actions ?? [])]) {
    if (action.target === 'postgres' && env.database === undefined) {
      throw new Error('a postgres action needs the run on the replicated PostgreSQL');
    }
    if (!isInfrastructure(action.target) && replicaOf(action.target).index >= config.replicas) {
      throw new Error(`action on ${action.target}: the run has ${config.replicas} replica(s)`);
    }
  }
  const reusedClientOrderId = config.reusedClientOrderId ?? CHAOS_REUSED_CLIENT_ORDER_ID;
  const random = seeded(config.seed);
  const scenarios = new Map<string, Scenario>();
  const sent: SentCommand[] = [];
  const deliberatelyUnknown = new Set<string>();
  const clockAdvances: ClockAdvance[] = [];

  /** Saga id → its scenario (a rebill's saga belongs to the scenario that sent it). */
  const bySaga = new Map<string, Scenario>();
  const payers: ChaosReport['payers'] = { byAnswer: {}, failed: [], acsWindowsExpired: 0 };
  const payerVisits: Promise<void>[] = [];
  /**
   * Scripted payers and payees still at their page: the sandbox's clock is not moved past the ACS
   * window meanwhile (on a loaded machine a payer who passes may reach the page late, and would
   * find the window closed under it: HTTP 409, no challenge form).
   */
  let payersActing = 0;
  const visiting = <T>(visit: Promise<T>): Promise<T> => {
    payersActing += 1;
    return visit.finally(() => {
      payersActing -= 1;
    });
  };
  const startPayer = (s: Scenario, plan: PayerPlan, url: string) => {
    const saga = s.saga;
    const card = { number: TEST_CARD_NUMBER, holder: 'JANE DOE', month: '12', year: '2030' };
    const visit = visiting(
      plan === 'payee'
        ? completePayoutFormOverHttp(url, card)
        : plan === 'card-form'
          ? completeCardFormOverHttp(url, { ...card, cvv: '123' })
          : answerChallengeOverHttp(url, plan === 'pass' ? 'hinted-password' : plan),
    );
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

  /** The population's sagas (issue #38 item 3): left processing, or a payer who abandons. */
  const population = new Map<string, 'processing' | 'abandon'>();
  const populationPayers = new Set<string>();
  const onEvent = (event: SagaEvent) => {
    const kind = population.get(sagaIdOf(event));
    if (
      kind === 'abandon' &&
      event.type === 'action-required' &&
      event.action.kind === 'redirect' &&
      !populationPayers.has(event.paymentId)
    ) {
      populationPayers.add(event.paymentId);
      const url = event.action.url;
      payerVisits.push(
        visiting(answerChallengeOverHttp(url, 'abandon')).then(
          () => {
            payers.byAnswer['abandon (population)'] =
              (payers.byAnswer['abandon (population)'] ?? 0) + 1;
          },
          (error: unknown) => {
            payers.failed.push({ sagaId: event.paymentId, error: (error as Error).message });
          },
        ),
      );
    }
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
    if ((last.until ?? [successOf(last.type)]).includes(event.type)) {
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
  // The day close at the end (day-close.ts), when asked for (config.dayClose): an operator's
  // token, the clock control, and the reconciliation paced to the adapter's status budget
  // (GATEWAY_STATUS_RATE_PER_SECOND: the population's, else the adapter's default 5/s). Off: the
  // orchestrator runs without them, as before the close existed.
  const admins = freshAdminTokens();
  const closeEnv = dayCloseEnv(config.population?.statusBudgetPerSecond ?? 5);
  const dayCloseStackEnv: Record<string, string> =
    config.dayClose === true
      ? { TEST_CONTROLS_ENABLED: 'true', ADMIN_TOKENS: admins.adminTokens, ...closeEnv }
      : {};
  const runStartedAt = Date.now();
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
          // Every alerted saga gets its case at once (issue 33: 0 in limbo at the run's end).
          CASE_AFTER_ALERT_HOURS: '0',
          CASE_SWEEP_MS: '1000',
          PAYOUT_LIMITS: JSON.stringify({
            default: {
              maxMinor: 100_000_000,
              dailyLimitMinor: config.payoutDailyLimitMinor,
              approvalWindowSeconds: config.approvalWindowSeconds,
            },
          }),
          // What the sandbox below does with a reused client_orderid, told to the orchestrator: in
          // `charge-again` (the default, as the spec promises nothing) no endpoint is declared, so
          // it never repeats a payment the gateway shows no trace of (it alerts a person instead);
          // in `refuse` the sandbox's endpoints are declared and it may.
          ...(reusedClientOrderId === 'refuse'
            ? {
                GATEWAY_REFUSES_REUSED_ORDER_ID_ENDPOINTS: [
                  SANDBOX_MERCHANT.plainEndpoint,
                  SANDBOX_MERCHANT.threeDsEndpoint,
                  SANDBOX_MERCHANT.paymentFormPreauthEndpoint,
                ].join(','),
              }
            : {}),
          ...(config.schedules === undefined ? {} : scheduleEnv()),
          ...dayCloseStackEnv,
        },
        'gateway-adapter': {
          ...replication,
          GATEWAY_RESPONSE_TIMEOUT_MS: String(config.faults.gatewayTimeoutMs),
          // The population phase: the status budget as a real gateway sets it (a few per second
          // per endpoint), two tokens of burst per replica (one of them the urgent reserve, so a
          // query about money that may just have moved never waits behind routine polls); the
          // replicas share the endpoint's rate (GATEWAY_ADAPTER_REPLICAS: each takes 1/replicas
          // of it), and the gateway's count is checked against it.
          GATEWAY_ADAPTER_REPLICAS: String(config.replicas),
          ...(config.population === undefined
            ? {}
            : {
                GATEWAY_STATUS_RATE_PER_SECOND: String(config.population.statusBudgetPerSecond),
                GATEWAY_STATUS_BURST: String(STATUS_BURST_PER_REPLICA * config.replicas),
              }),
        },
        'callback-ingest': replication,
      },
    },
    // Events of sagas no scenario started (payout budgets) find no scenario in onEvent.
    (received) => onEvent(received.event),
  );
  const kafka = kafkaClient(broker.brokers, 'chaos');
  const actions: ActionRecord[] = [];
  const failovers: FailoverRecord[] = [];
  /** A URL of one host for the run's own SQL (the outage, the audit): the primary's when replicated. */
  const oneHost = (url: string) => env.database?.primaryUrl(url) ?? Promise.resolve(url);
  const clusterPort = Number(broker.brokers[0]?.split(':').at(-1));
  let brokerTurn = 0;
  let sampler: StatusSampler | undefined;
  try {
    if (config.livenessPeriodMs > 0) stack.superviseLiveness(config.livenessPeriodMs, 3);
    await stack.controls.reset();
    await stack.controls.changeSettings({
      faultSeed: config.seed,
      reusedClientOrderId,
    });
    for (const rule of faultRules(config.faults)) await stack.controls.addFault(rule);
    // The status queries the gateway sees, per adapter replica, read once a second.
    sampler = config.population === undefined ? undefined : sampleStatusCalls(stack);

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
        paymentId: contractsSagaIdOf(command) ?? '',
        type,
        sentAt: Date.now(),
        ...(cardRefId === undefined ? {} : { cardRefId }),
      });
    };
    /**
     * A scenario's step: the faults aimed at its saga first, then its command (and the one sent
     * alongside it, on the same saga, without waiting for the first's answer).
     */
    const timing = {
      neverReceivedSeconds: config.neverReceivedSeconds,
      gatewayTimeoutMs: config.faults.gatewayTimeoutMs,
    };
    const sendStep = async (s: Scenario, step: Step) => {
      for (const rule of step.faults?.(timing) ?? [])
        await stack.controls.addFault({ ...rule, clientOrderId: s.saga });
      for (const one of step.alongside === undefined ? [step] : [step, step.alongside]) {
        await send(
          commandOf(stack, s, one),
          one.type,
          COMMANDS[one.type]?.namesCardRef ? s.cardRefId : undefined,
        );
      }
    };
    // Deliberately unknown payments first, so they are old by the end.
    for (let i = 0; i < config.unknownCards; i++) {
      const sale = stack.sale({ paymentId: seededUuid(random), cvv: '217', amountMinor: 777 + i });
      deliberatelyUnknown.add(sale.paymentId);
      await send(sale, 'sale');
    }

    let reserved = config.unknownCards;
    const populationTarget =
      config.population === undefined
        ? 0
        : Math.max(config.population.min, Math.round(config.population.share * config.commands));
    let populationSent = 0;
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
    const outageSeconds = config.adapterDatabaseOutageSeconds ?? 0;
    let outagePlanned = outageSeconds > 0;
    const outageWindow = { from: 0, to: 0 };
    // In the chain of chaos actions, so no replica of the adapter is restarting meanwhile (an app
    // does not start without its database: that would be another test).
    const startOutage = () => {
      outagePlanned = false;
      chaos = chaos.then(async () => {
        log(`chaos: the adapter's database out for ${outageSeconds} s`);
        const outage = await DatabaseOutage.start(await oneHost(env.adapterDatabaseUrl));
        outageWindow.from = Date.now();
        try {
          await sleep(outageSeconds * 1000);
        } finally {
          await outage.end().catch((error: unknown) => {
            log(`chaos: ending the database outage failed: ${(error as Error).message}`);
          });
          outageWindow.to = Date.now();
          log(`chaos: the adapter's database back`);
        }
      });
    };
    const fire = (action: ChaosAction) => {
      chaos = chaos.then(async () => {
        const at = Date.now();
        if (action.target === 'postgres') {
          // Checked at the start: a postgres action needs the replicated database.
          const database = env.database;
          if (database === undefined) throw new Error('no replicated PostgreSQL');
          log(
            `chaos: ${action.signal} the PostgreSQL primary (keeper and postmaster: the node lost)`,
          );
          const record = await loseThePrimary(database, env.orchestratorDatabaseUrl, log);
          failovers.push(record);
          actions.push({
            ...action,
            at,
            node: record.killedNode,
            backAt: record.writableAt ?? Date.now(),
            ...(record.writableAt === undefined ? {} : { recoveryMs: record.writableAt - at }),
          });
        } else if (isBrokerTarget(action.target)) {
          // Chosen when the action runs: the controller may have moved since the last one.
          const controller = broker.cluster ? kraftController(clusterPort) : undefined;
          const node = brokerNodeFor(action.target, broker.cluster, controller, brokerTurn);
          if (action.target === 'broker') brokerTurn += 1;
          log(
            `chaos: ${action.signal} ${action.target}${broker.cluster ? ` (node ${node}; the KRaft controller is node ${controller ?? '?'})` : ''}`,
          );
          await broker.restart(action.signal, node);
          actions.push({ ...action, at, node, backAt: Date.now() });
        } else {
          log(`chaos: ${action.signal} ${action.target}`);
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
      if (outagePlanned && reserved >= config.commands / 2) startOutage();
      while (fired < thresholds.length && reserved >= thresholds[fired]) {
        fire(config.actions[fired]);
        fired += 1;
      }
      const follow = [...scenarios.values()].find((s) => s.ready);
      if (follow) {
        follow.ready = false;
        const step = follow.steps[follow.next];
        follow.next += 1;
        if (COMMANDS[step.type]?.ownSaga) {
          follow.saga = follow.ownSagas[follow.ownSagasUsed++];
          follow.seenVersion = 0;
          follow.payerStarted = false;
          bySaga.set(follow.saga, follow);
        }
        await sendStep(follow, step);
      } else if (
        reserved < config.commands &&
        populationSent < populationTarget &&
        reserved >= (populationSent * config.commands) / populationTarget
      ) {
        // The population: every other one left processing by the sandbox for good (its SALE
        // answered `unknown`), the others 3-D Secure sales whose payer opens the ACS page and
        // leaves. Not scenarios: nothing waits for them; their truth is timed like any other.
        const kind = populationSent % 2 === 0 ? 'processing' : 'abandon';
        populationSent += 1;
        // Part of the run's commands, as every other (commands sent + unsent = --commands).
        reserved += 1;
        const paymentId = seededUuid(random);
        population.set(paymentId, kind);
        deliberatelyUnknown.add(paymentId);
        if (kind === 'processing')
          await stack.controls.addFault({
            clientOrderId: paymentId,
            operation: 'SALE',
            outcome: 'unknown',
          });
        await send(
          stack.sale({
            paymentId,
            cvv: kind === 'processing' ? '123' : '321',
            amountMinor: 100 + Math.floor(random() * 9_900),
            ...(kind === 'abandon' ? { endpointId: SANDBOX_MERCHANT.threeDsEndpoint } : {}),
          }),
          'sale',
        );
      } else if (reserved < config.commands) {
        // One of each guaranteed scenario first (as the budget allows), then the seeded draw.
        const first = SCENARIOS.find((s) => s.name === GUARANTEED_FIRST[guaranteed]);
        if (first) guaranteed += 1;
        let shape = first ?? pick();
        if (reserved + commandsOf(shape.steps) > config.commands) shape = SCENARIOS[0];
        reserved += commandsOf(shape.steps);
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
          ownSagas: shape.steps
            .filter((s) => COMMANDS[s.type]?.ownSaga)
            .map(() => seededUuid(random)),
          ownSagasUsed: 0,
        };
        scenarios.set(scenario.paymentId, scenario);
        bySaga.set(scenario.paymentId, scenario);
        await sendStep(scenario, shape.steps[0]);
      } else {
        // Everything started: wait for the follow-ups, then for quiescence (bounded).
        if (fired === thresholds.length && !outagePlanned) await chaos;
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
          payersActing === 0 &&
          openScenarios.some((s) => s.abandoned) &&
          openScenarios.every((s) => s.abandoned || stalled(s)) &&
          Date.now() - lastAcsExpiry > 60_000
        ) {
          lastAcsExpiry = Date.now();
          log(`moving the sandbox's clock ${ACS_WINDOW_SECONDS} s: the abandoned ACS windows end`);
          await stack.controls.advanceClock(ACS_WINDOW_SECONDS);
          clockAdvances.push({ wallAt: Date.now(), seconds: ACS_WINDOW_SECONDS });
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
    const statusReadings = (await sampler?.stop()) ?? new Map<string, StatusReading[]>();
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
    const { events, scheduleEvents, unreadable, timedBySaga, familyOfType, dlq, outageDlq } =
      await scanStream(kafka, actions, outageWindow);
    const ledger = await stack.controls.ledger();
    const attempts = (await stack.controls.callbacks()).attempts;
    const eventTypes: Record<string, number> = {};
    const seenCe = new Set<string>();
    for (const e of events) {
      if (seenCe.has(e.ceId)) continue;
      seenCe.add(e.ceId);
      eventTypes[e.event.type] = (eventTypes[e.event.type] ?? 0) + 1;
    }
    const sentSagas = new Set(sent.map((c) => c.paymentId));
    const truth =
      config.population === undefined
        ? undefined
        : {
            ...timeToTruth({
              ledger: ledger.entries,
              events: new Map([...timedBySaga].filter(([id]) => sentSagas.has(id))),
              callbacksDelivered: attempts
                .filter((a) => !a.dropped && a.httpStatus >= 200 && a.httpStatus < 300)
                .reduce(
                  (m, a) =>
                    m.set(a.clientOrderId, [...(m.get(a.clientOrderId) ?? []), Date.parse(a.at)]),
                  new Map<string, number[]>(),
                ),
              advances: clockAdvances,
              // The broker's restarts, the adapter's database outage and the PostgreSQL primary's
              // loss (until a writable primary was back): every app waits.
              disruptions: [
                ...actions
                  .filter((a) => isInfrastructure(a.target))
                  .map((a) => ({ from: a.at, to: a.at + (a.recoveryMs ?? a.backAt - a.at) })),
                ...(outageWindow.to > 0 ? [outageWindow] : []),
              ],
              bounds: {
                callbackP99Ms: config.population.callbackP99Seconds * 1000,
                lostBoundMs:
                  (config.neverReceivedSeconds + config.population.lostSlackSeconds) * 1000,
              },
              families: familyOfType,
            }),
            status: statusBudgetExceeded(
              statusReadings,
              config.population.statusBudgetPerSecond,
              STATUS_BURST_PER_REPLICA * config.replicas,
            ),
            population: {
              processing: [...population.values()].filter((k) => k === 'processing').length,
              abandon: [...population.values()].filter((k) => k === 'abandon').length,
            },
          };
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
    for (const f of failovers)
      f.figures = failoverFigures({
        killedAt: f.killedAt,
        ...(f.writableAt === undefined ? {} : { writableAt: f.writableAt }),
        commands: sent,
        events: timedBySaga,
      });
    const openCases = await openCaseCounts(env.orchestratorDatabaseUrl);
    // Last, after every other check: closing the day moves the orchestrator's clock past its end,
    // which fires every timer (alerts, resends, approval windows, dunning retries). Only when
    // asked for (`--day-close`, CHAOS_DAY_CLOSE=1): it takes minutes.
    let dayClose: DayCloseResult | { readonly error: string } | undefined;
    if (config.dayClose === true) {
      try {
        dayClose = await closeChaosDay(stack, {
          operatorToken: admins.tokens.operator,
          startedAt: runStartedAt,
          orchestratorDatabaseUrl: env.orchestratorDatabaseUrl,
          reconciliationRatePerSecond: Number(closeEnv.RECONCILIATION_RATE_PER_SECOND),
          log,
        });
      } catch (error) {
        log(`day close failed: ${(error as Error).message}`);
        dayClose = { error: (error as Error).message };
      }
    } else {
      log('day close: not run (enable with --day-close)');
    }
    await stack.stop();

    log('card-data audit...');
    const audit = await auditCardData({
      logDirs: [path.join(workDir, 'logs')],
      databaseUrls: [
        await oneHost(env.orchestratorDatabaseUrl),
        await oneHost(env.adapterDatabaseUrl),
      ],
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
      openCases,
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
      ...(outageWindow.to > 0 ? { outage: { ...outageWindow, dlq: outageDlq } } : {}),
      outboxBacklog,
      livenessRestarts: [...stack.livenessRestarts],
      ...(truth === undefined ? {} : { truth }),
      invalidEvents: unreadable.length,
      unreadable: unreadable.slice(0, 10),
      collectorInvalid: stack.events.invalid.length,
      audit,
      workDir,
      ...(schedules === undefined ? {} : { schedules }),
      ...(failovers.length === 0 ? {} : { failovers }),
      ...(dayClose === undefined ? {} : { dayClose }),
    };
  } finally {
    await sampler?.stop();
    await stack.stop();
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
