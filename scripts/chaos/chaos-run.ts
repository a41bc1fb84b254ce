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
  TEST_CARD_NUMBER,
} from '../stack/payment-stack';
import {
  answerChallengeOverHttp,
  completeCardFormOverHttp,
  completePayoutFormOverHttp,
} from '../stack/payer-http';
import { RUN_DIR, sleep } from '../stack/processes';
import { checkRun, CommandType, SagaEvent, sagaIdOf, SentCommand } from './checks';
import { checkSchedules } from './schedule-checks';
import { GATEWAY_CHARGE_GRACE_SECONDS, type SchedulePhase } from './schedule-plan';
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
  type ChaosConfig,
  type ChaosEnvironment,
  type ChaosReport,
  CHAOS_REUSED_CLIENT_ORDER_ID,
  faultRules,
  isInfrastructure,
} from './chaos-config';
import { failoverFigures } from './infrastructure';
import { ChaosActions } from './chaos-actions';
import { chaosStackOptions, STATUS_BURST_PER_REPLICA } from './chaos-stack';
import { BACKLOG_AFTER_SECONDS, openCaseCounts, outboxCount, quiet } from './quiescence';
import { COMMANDS } from './flows';
import { chaosDayClose } from './day-close';
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
  mayEndAcsWindows,
  successOf,
  summarize,
} from './workload';

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

  // The day close at the end (day-close.ts) when asked for (`--day-close`): its orchestrator
  // settings (the clock control, an operator, the pace); off, none.
  const dayCloser = chaosDayClose(config);
  const runStartedAt = Date.now();
  const stack = await PaymentStack.start(
    chaosStackOptions(config, env, workDir, reusedClientOrderId, dayCloser?.env),
    // Events of sagas no scenario started (payout budgets) find no scenario in onEvent.
    (received) => onEvent(received.event),
  );
  const kafka = kafkaClient(broker.brokers, 'chaos');
  /** A URL of one host for the run's own SQL (the outage, the audit): the primary's when replicated. */
  const oneHost = (url: string) => env.database?.primaryUrl(url) ?? Promise.resolve(url);
  const chaos = new ChaosActions(stack, env, oneHost);
  const { actions, failovers, outageWindow } = chaos;
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
    let fired = 0;
    const outageSeconds = config.adapterDatabaseOutageSeconds ?? 0;
    let outagePlanned = outageSeconds > 0;
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
      if (outagePlanned && reserved >= config.commands / 2) {
        outagePlanned = false;
        chaos.outage(outageSeconds);
      }
      while (fired < thresholds.length && reserved >= thresholds[fired]) {
        chaos.fire(config.actions[fired]);
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
        if (fired === thresholds.length && !outagePlanned) await chaos.done();
        allStarted ??= Date.now();
        if (Date.now() - lastProgress > 5_000) {
          lastProgress = Date.now();
          progress();
        }
        const openScenarios = [...scenarios.values()].filter((s) => !s.ended);
        const open = openScenarios.length > 0;
        // Payers who left their ACS page wait for the challenge window on the sandbox's clock (10
        // minutes): it is moved past it, once nothing else is under way (every other open saga
        // silent for a minute, five while its payer waits for the redirect: moving the clock
        // cannot change what it awaits), and again if the declines have not come within a minute.
        if (
          mayEndAcsWindows(openScenarios, payersActing, Date.now()) &&
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
    await chaos.done();
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
    // which fires every timer (alerts, resends, approval windows, dunning retries).
    const dayClose = await dayCloser?.run(stack, {
      startedAt: runStartedAt,
      orchestratorDatabaseUrl: env.orchestratorDatabaseUrl,
      log,
    });
    if (dayClose === undefined) log('day close: not run (enable with --day-close)');
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
