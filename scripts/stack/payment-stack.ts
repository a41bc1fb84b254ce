import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type {
  AccountVerificationCommand,
  AccountVerificationFormCommand,
  CaptureCommand,
  PaymentCommand,
  ReturnCommand,
  SaleCommand,
  VoidCommand,
} from '@payments/contracts';
import { Balancer } from './balancer';
import { freshAdminTokens, type RunningConsole, startConsole } from './console-app';
import { pointGroupAtEnd, stackConsumerGroups } from './consumer-groups';
import {
  CommandProducer,
  EventCollector,
  ReceivedEvent,
  ReceivedPayoutEvent,
  kafkaClient,
} from './kafka-io';
import {
  AppProcessSpec,
  REPO_ROOT,
  RUN_DIR,
  RunningApp,
  freePort,
  startApp,
  waitForReady,
} from './processes';
import { CARD_PRIVATE_KEY_FILE, callbackControlKeys, sandboxCredentials } from './sandbox-config';
import { type FaultRule, SandboxControls } from './sandbox-controls';
import {
  accountVerificationFormOf,
  accountVerificationOf,
  captureCommand,
  hostedFormOf,
  returnCommand,
  saleCommand,
  type SaleOptions,
  voidCommand,
} from './payment-commands';

// Where the e2e suites, the chaos run, the demo and the bench have always taken them from.
export {
  SANDBOX_MERCHANT,
  SECOND_MERCHANT,
  TEST_CARD_NUMBER,
  sandboxMerchantsWithDelay,
} from './sandbox-config';
export type { SaleOptions } from './payment-commands';

/**
 * The whole product on one machine: the gateway sandbox and the three apps as separate
 * processes on a real broker and real PostgreSQL databases, configured the way an operator
 * would configure them (environment variables, credential files). Used by `npm run demo`, the
 * e2e tests and the benchmark.
 */
export type AppName = 'gateway-sandbox' | 'orchestrator' | 'gateway-adapter' | 'callback-ingest';
export const APP_NAMES: readonly AppName[] = [
  'gateway-sandbox',
  'gateway-adapter',
  'callback-ingest',
  'orchestrator',
];

/** The apps a stack may run several replicas of (the sandbox plays one gateway). */
export type ReplicatedApp = Exclude<AppName, 'gateway-sandbox'>;

/**
 * One process of an app: `orchestrator#1` is the orchestrator's second replica (numbered from 0,
 * as a StatefulSet's pods); a bare app name is its replica 0, all there is with one replica.
 */
export type ReplicaName = AppName | `${ReplicatedApp}#${number}`;

export function replicaOf(name: ReplicaName): { app: AppName; index: number } {
  const [app, index] = name.split('#');
  return { app: app as AppName, index: index === undefined ? 0 : Number(index) };
}

export interface PaymentStackOptions {
  readonly kafkaBrokers: readonly string[];
  readonly orchestratorDatabaseUrl: string;
  readonly adapterDatabaseUrl: string;
  /** Fixed ports (the demo); free ports are picked for the ones not given. */
  readonly ports?: Partial<Record<AppName, number>>;
  /** Extra environment per app (e.g. shorter timers in tests). */
  readonly env?: Partial<Record<AppName, Record<string, string>>>;
  /** Where logs and generated credentials go; default .run/<random>. */
  readonly workDir?: string;
  readonly logLevel?: string;
  /**
   * Where the processes' consumer groups start: `at-end` (the default) points them at the end of
   * their input topics before the processes start, so a stack never takes over what an earlier
   * run on the same broker left unprocessed; `as-committed` leaves the groups' offsets as they are
   * (a stack that must resume what an earlier one left). Restarts never move them.
   */
  readonly consumerGroups?: 'at-end' | 'as-committed';
  /**
   * Replicas of the orchestrator, the gateway-adapter and callback-ingest (default 1), as the
   * Helm chart runs them: distinct HTTP ports, the same consumer groups and databases. With more
   * than one, `urls[app]` is a balancer in front of the live replicas (a Service), so callbacks
   * and API calls reach whichever is up.
   */
  readonly replicas?: number;
  /**
   * How the adapter asks the gateway to answer: `json` (the default) or `form` — every endpoint
   * set to `replyFormat: form` (no JSON Accept) and the sandbox answering such requests
   * form-encoded (SANDBOX_ACCEPT_MODE=form), as the gateway's default API does.
   */
  readonly replyFormat?: 'json' | 'form';
  /** Per-endpoint limits written into the adapter's credentials (its `limits` entry). */
  readonly endpointLimits?: Readonly<Record<string, Record<string, number>>>;
  /**
   * A restarted orchestrator replica is moved forward as far as `advanceOrchestratorClock` has
   * moved the stack's (the offset lives in the process, a new one starts from the real time), so
   * replicas killed while the clock is moved agree on the time. Off by default: a test that
   * restarts the orchestrator and moves it again itself keeps doing so.
   */
  readonly restoreOrchestratorClock?: boolean;
  /**
   * Also start the operators' console in front of the orchestrator's admin API (`stack.console`).
   * Without ADMIN_TOKENS in `env.orchestrator`, a viewer's and an operator's token are made up.
   */
  readonly console?: boolean | { readonly port?: number };
}

function isRunning(app: RunningApp | undefined): boolean {
  return app !== undefined && app.child.exitCode === null && app.child.signalCode === null;
}

function liveOf(replicas: readonly RunningApp[]): string[] {
  return replicas.filter(isRunning).map((r) => r.spec.readyUrl.replace(/\/health\/ready$/, ''));
}

export class PaymentStack {
  readonly controls: SandboxControls;
  private readonly producer: CommandProducer;
  readonly events: EventCollector;
  /** The console, when started with the `console` option. */
  console: RunningConsole | undefined;

  private constructor(
    readonly options: PaymentStackOptions,
    /** Where callers reach each app: its one replica, or the balancer in front of several. */
    readonly urls: Record<AppName, string>,
    /** Each app's replicas, index = replica number. */
    readonly replicas: Record<AppName, RunningApp[]>,
    private readonly specs: Record<AppName, AppProcessSpec[]>,
    private readonly balancers: readonly Balancer[],
    readonly workDir: string,
    onEvent?: (received: ReceivedEvent | ReceivedPayoutEvent) => void,
  ) {
    this.controls = new SandboxControls(urls['gateway-sandbox']);
    const kafka = kafkaClient(options.kafkaBrokers, 'payment-stack');
    this.producer = new CommandProducer(kafka);
    this.events = new EventCollector(kafka, onEvent);
  }

  static async start(
    options: PaymentStackOptions,
    onEvent?: (received: ReceivedEvent | ReceivedPayoutEvent) => void,
  ): Promise<PaymentStack> {
    const workDir = options.workDir ?? path.join(RUN_DIR, `stack-${randomUUID().slice(0, 8)}`);
    mkdirSync(workDir, { recursive: true });
    const count = (app: AppName) => (app === 'gateway-sandbox' ? 1 : (options.replicas ?? 1));
    const ports = {} as Record<AppName, number>;
    for (const app of APP_NAMES) ports[app] = options.ports?.[app] ?? (await freePort());
    const urls = {} as Record<AppName, string>;
    for (const app of APP_NAMES) urls[app] = `http://127.0.0.1:${ports[app]}`;
    // With several replicas the app's port is the balancer's, each replica listens on its own.
    const replicaPorts = {} as Record<AppName, number[]>;
    for (const app of APP_NAMES) {
      replicaPorts[app] =
        count(app) === 1
          ? [ports[app]]
          : await Promise.all(Array.from({ length: count(app) }, () => freePort()));
    }

    const credentialsFile = path.join(workDir, 'gateway-credentials.json');
    writeFileSync(
      credentialsFile,
      sandboxCredentials(
        urls['gateway-sandbox'],
        options.replyFormat ?? 'json',
        options.endpointLimits ?? {},
      ),
    );

    const common = {
      LOG_LEVEL: options.logLevel ?? 'info',
      KAFKA_BROKERS: options.kafkaBrokers.join(','),
      // The local brokers allow 1 s sessions (deploy/local/kafka): a consumer killed with SIGKILL
      // is replaced in ≈ 3 s instead of the 6 s default, which a stock broker's minimum needs.
      KAFKA_SESSION_TIMEOUT_MS: '3000',
      KAFKA_HEARTBEAT_INTERVAL_MS: '500',
    };
    const env: Record<AppName, Record<string, string>> = {
      'gateway-sandbox': {
        LOG_LEVEL: common.LOG_LEVEL,
        SANDBOX_TEST_CONTROLS: 'true',
        SANDBOX_MERCHANTS_FILE: path.join(REPO_ROOT, 'apps/gateway-sandbox/sandbox.merchants.json'),
        SANDBOX_CALLBACK_BASE_DELAY_MS: '200',
        SANDBOX_CALLBACK_MAX_DELAY_MS: '2000',
        ...(options.replyFormat === 'form' ? { SANDBOX_ACCEPT_MODE: 'form' } : {}),
      },
      'gateway-adapter': {
        ...common,
        DATABASE_URL: options.adapterDatabaseUrl,
        GATEWAY_CREDENTIALS_FILE: credentialsFile,
        CARD_SEALING_PRIVATE_KEY_FILE: CARD_PRIVATE_KEY_FILE,
        CALLBACK_BASE_URL: urls['callback-ingest'],
      },
      'callback-ingest': {
        ...common,
        CALLBACK_CONTROL_KEYS: JSON.stringify(callbackControlKeys()),
        MERCHANT_RETURN_URL: 'http://127.0.0.1:9/merchant/return',
      },
      orchestrator: {
        ...common,
        DATABASE_URL: options.orchestratorDatabaseUrl,
      },
    };
    const made =
      options.console && options.env?.orchestrator?.ADMIN_TOKENS === undefined
        ? freshAdminTokens()
        : undefined;
    if (made) env.orchestrator.ADMIN_TOKENS = made.adminTokens;
    const specs = {} as Record<AppName, AppProcessSpec[]>;
    const replicas = {} as Record<AppName, RunningApp[]>;
    for (const app of APP_NAMES) {
      specs[app] = replicaPorts[app].map((port, index) => ({
        app,
        env: { ...env[app], HTTP_PORT: String(port), ...(options.env?.[app] ?? {}) },
        readyUrl: `http://127.0.0.1:${port}/health/ready`,
        logFile: path.join(
          workDir,
          'logs',
          count(app) === 1 ? `${app}.log` : `${app}-${index}.log`,
        ),
      }));
      replicas[app] = [];
    }
    if ((options.consumerGroups ?? 'at-end') === 'at-end') {
      const kafka = kafkaClient(options.kafkaBrokers, 'payment-stack-groups');
      for (const { groupId, topics } of stackConsumerGroups(
        specs.orchestrator[0].env.KAFKA_CONSUMER_GROUP,
      )) {
        await pointGroupAtEnd(kafka, groupId, topics);
      }
    }
    const balancers: Balancer[] = [];
    try {
      for (const app of APP_NAMES) {
        if (count(app) === 1) continue;
        // `replicas` is the stack's own record: a restarted replica is routed to as it comes up.
        balancers.push(await Balancer.start(ports[app], () => liveOf(replicas[app])));
      }
      for (const app of APP_NAMES) {
        // Replicas of one app boot side by side: the migrations run under an advisory lock.
        replicas[app] = specs[app].map((spec) => startApp(spec));
        await Promise.all(replicas[app].map((r) => waitForReady(r, 90_000)));
      }
    } catch (error) {
      await Promise.all(
        Object.values(replicas)
          .flat()
          .map((a) => a.stop('SIGKILL')),
      );
      await Promise.all(balancers.map((b) => b.stop()));
      throw error;
    }
    const stack = new PaymentStack(options, urls, replicas, specs, balancers, workDir, onEvent);
    if (options.console) {
      stack.console = await startConsole({
        adminApiUrl: urls.orchestrator,
        workDir,
        ...(options.console === true ? {} : options.console),
        ...(options.logLevel ? { logLevel: options.logLevel } : {}),
        ...(made ? { tokens: made.tokens } : {}),
      }).catch(async (error: unknown) => {
        await stack.stop();
        throw error;
      });
    }
    await stack.producer.connect();
    await stack.events.start();
    return stack;
  }

  /** The first replica of each app: all there is in a stack of one replica per app. */
  get apps(): Record<AppName, RunningApp> {
    return Object.fromEntries(APP_NAMES.map((app) => [app, this.replicas[app][0]])) as Record<
      AppName,
      RunningApp
    >;
  }

  /** Every replica's name, e.g. `orchestrator#0`, `orchestrator#1` (a bare name with one). */
  replicaNames(app: AppName): ReplicaName[] {
    return this.replicas[app].map((_, i) =>
      this.replicas[app].length === 1 ? app : (`${app}#${i}` as ReplicaName),
    );
  }

  /** One replica's own base URL (not the balancer's). */
  replicaUrl(name: ReplicaName): string {
    const { app, index } = this.resolve(name);
    return `http://127.0.0.1:${this.specs[app][index].env.HTTP_PORT}`;
  }

  private resolve(name: ReplicaName): { app: AppName; index: number } {
    const { app, index } = replicaOf(name);
    if (!this.specs[app]?.[index]) throw new Error(`no replica ${name} in this stack`);
    return { app, index };
  }

  /** The canonical name of a replica (`orchestrator` and `orchestrator#0` are one with one replica). */
  private key(name: ReplicaName): ReplicaName {
    const { app, index } = this.resolve(name);
    return this.replicaNames(app)[index];
  }

  /**
   * Stops a replica (SIGKILL simulates a crash) and starts it again with the same configuration,
   * plus `env` overrides that stay in force for its later restarts.
   */
  async restart(
    name: ReplicaName,
    signal: NodeJS.Signals = 'SIGTERM',
    env: Record<string, string> = {},
  ): Promise<void> {
    const { app, index } = this.resolve(name);
    await this.kill(name, signal);
    const spec = this.specs[app][index];
    this.specs[app][index] = { ...spec, env: { ...spec.env, ...env } };
    await this.startAgain(name);
  }

  /** Stops a replica; the balancer routes around it and the liveness supervisor leaves it be. */
  async kill(name: ReplicaName, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const { app, index } = this.resolve(name);
    this.busy.add(this.key(name));
    await this.replicas[app][index].stop(signal);
  }

  async startAgain(name: ReplicaName): Promise<void> {
    const { app, index } = this.resolve(name);
    const restore = app === 'orchestrator' && this.options.restoreOrchestratorClock === true;
    // Restored: the replica starts at the stack's offset (TEST_CLOCK_OFFSET_SECONDS), so nothing
    // it handles is stamped with the real time. Moved afterwards it used to handle messages at the
    // real time until then: a chaos run's rebills settled on the day before they were requested,
    // which that day's reconciliation never read (test/chaos.md, Traps).
    const offset = this.orchestratorClockSeconds;
    const spec = this.specs[app][index];
    this.replicas[app][index] = startApp(
      restore && offset > 0
        ? { ...spec, env: { ...spec.env, TEST_CLOCK_OFFSET_SECONDS: String(offset) } }
        : spec,
    );
    try {
      await waitForReady(this.replicas[app][index], 90_000);
      // Moved meanwhile (an advance that missed it while it started): the rest now, by its clock.
      if (restore && this.orchestratorClockSeconds > offset) {
        const response = await fetch(`${this.replicaUrl(name)}/test-controls/clock`);
        const { now } = (await response.json()) as { now: string };
        const behind = Date.now() + this.orchestratorClockSeconds * 1000 - Date.parse(now);
        if (behind >= 1000) await this.advanceReplicaClock(name, Math.round(behind / 1000));
      }
    } finally {
      this.busy.delete(this.key(name));
    }
  }

  /** Replicas being stopped or started by the caller: the liveness supervisor leaves them alone. */
  private readonly busy = new Set<ReplicaName>();
  private supervisor: NodeJS.Timeout | undefined;
  /** Restarts made by the liveness supervisor, in order. */
  readonly livenessRestarts: { app: ReplicaName; at: number; answer: string }[] = [];

  /**
   * What an orchestrator's liveness probe does (deploy/helm: GET /health/live, restart after
   * `failureThreshold` failures in a row): every `periodMs`, each app but the sandbox is asked;
   * one that fails that often is SIGKILLed and started again. Off unless called.
   */
  superviseLiveness(periodMs: number, failureThreshold: number): void {
    const failures = new Map<ReplicaName, number>();
    let round = Promise.resolve();
    this.supervisor = setInterval(() => {
      round = round
        .then(async () => {
          const names = APP_NAMES.filter((a) => a !== 'gateway-sandbox').flatMap((a) =>
            this.replicaNames(a),
          );
          for (const app of names) {
            if (this.busy.has(app)) {
              failures.delete(app);
              continue;
            }
            const answer = await fetch(`${this.replicaUrl(app)}/health/live`, {
              signal: AbortSignal.timeout(Math.max(500, periodMs)),
            }).then(
              async (r) =>
                r.ok ? undefined : `HTTP ${r.status} ${(await r.text()).slice(0, 300)}`,
              (error: unknown) => (error as Error).message,
            );
            const count = answer === undefined ? 0 : (failures.get(app) ?? 0) + 1;
            failures.set(app, count);
            if (answer !== undefined && count >= failureThreshold && !this.busy.has(app)) {
              failures.delete(app);
              this.livenessRestarts.push({ app, at: Date.now(), answer });
              await this.kill(app, 'SIGKILL');
              await this.startAgain(app);
            }
          }
        })
        .catch(() => undefined); // a failed restart is tried again at the next failures
    }, periodMs);
  }

  send(...commands: PaymentCommand[]): Promise<void> {
    return this.producer.send(commands);
  }

  /** Sends values that are not valid commands (malformed input tests). */
  sendRaw(...values: unknown[]): Promise<void> {
    return this.producer.send(values, true);
  }

  /**
   * Moves the orchestrator's clock forward (its TEST_CONTROLS_ENABLED=true control): schedule
   * cycles and dunning retries come due in seconds. The offset lives in the process; a restarted
   * orchestrator starts from the real time again.
   */
  async advanceOrchestratorClock(seconds: number): Promise<void> {
    this.orchestratorClockSeconds += seconds;
    // Every replica keeps its own offset: each is moved, so timers fire alike wherever claimed.
    for (const name of this.replicaNames('orchestrator')) {
      try {
        await this.advanceReplicaClock(name, seconds);
      } catch (error) {
        // A replica being restarted is moved to the whole offset as it comes back (restore on).
        if (!(this.options.restoreOrchestratorClock === true && this.busy.has(this.key(name))))
          throw error;
      }
    }
  }

  /**
   * Moves every orchestrator replica's clock back to the system time (the demo, once its schedule
   * section is done, before it keeps running: what people do next is stamped with the real time).
   */
  async resetOrchestratorClock(): Promise<void> {
    this.orchestratorClockSeconds = 0;
    for (const name of this.replicaNames('orchestrator')) {
      const response = await fetch(`${this.replicaUrl(name)}/test-controls/clock/reset`, {
        method: 'POST',
      });
      if (response.status !== 200)
        throw new Error(`clock reset on ${name}: HTTP ${response.status} ${await response.text()}`);
    }
  }

  /** How far `advanceOrchestratorClock` has moved the orchestrator's clock, in seconds. */
  get orchestratorClockAdvanced(): number {
    return this.orchestratorClockSeconds;
  }

  private orchestratorClockSeconds = 0;

  private async advanceReplicaClock(name: ReplicaName, seconds: number): Promise<void> {
    const response = await fetch(`${this.replicaUrl(name)}/test-controls/clock/advance`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ seconds }),
    });
    if (response.status !== 200)
      throw new Error(`clock advance on ${name}: HTTP ${response.status} ${await response.text()}`);
  }

  /** GET /payments/:id on the orchestrator's read API. */
  async payment(paymentId: string): Promise<{ status: number; body: unknown }> {
    const response = await fetch(`${this.urls.orchestrator}/payments/${paymentId}`);
    return { status: response.status, body: await response.json() };
  }

  /** A sale with the sealed test card (payment-commands.ts). */
  sale(options: SaleOptions = {}): SaleCommand {
    return saleCommand(this.urls['callback-ingest'], options);
  }

  /**
   * One call of the orchestrator's admin API with a bearer token (none: unauthenticated), its
   * status and its JSON body (`{}` when the answer has none).
   */
  async admin<B = Record<string, unknown>>(
    method: 'GET' | 'POST',
    route: string,
    token: string | undefined,
    body?: unknown,
  ): Promise<{ status: number; body: B }> {
    const response = await fetch(`${this.urls.orchestrator}${route}`, {
      method,
      headers: {
        ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return { status: response.status, body: (text === '' ? {} : JSON.parse(text)) as B };
  }

  /** Sends a sale (CVV 123) with these sandbox fault rules on its own order, matched in order. */
  async saleWith(
    amountMinor: number,
    ...faults: Array<Omit<FaultRule, 'clientOrderId'>>
  ): Promise<SaleCommand> {
    const sale = this.sale({ cvv: '123', amountMinor });
    for (const fault of faults)
      await this.controls.addFault({ clientOrderId: sale.paymentId, ...fault });
    await this.send(sale);
    return sale;
  }

  preauth(options: SaleOptions = {}): PaymentCommand {
    return { ...this.sale(options), type: 'preauth' };
  }

  /** A hosted form: the sale's fields without any card; the payer types it there. */
  hostedForm(
    type: 'sale-form' | 'preauth-form' | 'payment-form',
    options: SaleOptions = {},
  ): PaymentCommand {
    return hostedFormOf(this.sale(options), type);
  }

  /** Account verification (zero amount) with the sealed card (cvv 123 passes). */
  accountVerification(options: SaleOptions = {}): AccountVerificationCommand {
    return accountVerificationOf(this.sale(options));
  }

  /** Account verification on the gateway's hosted page. */
  accountVerificationForm(options: SaleOptions = {}): AccountVerificationFormCommand {
    return accountVerificationFormOf(this.accountVerification(options));
  }

  capture(paymentId: string, amountMinor?: number, currency = 'USD'): CaptureCommand {
    return captureCommand(paymentId, amountMinor, currency);
  }

  void(paymentId: string): VoidCommand {
    return voidCommand(paymentId);
  }

  return(paymentId: string, amountMinor?: number, currency = 'USD'): ReturnCommand {
    return returnCommand(paymentId, amountMinor, currency);
  }

  async stop(): Promise<void> {
    if (this.supervisor) clearInterval(this.supervisor);
    await this.events.stop().catch(() => undefined);
    await this.producer.disconnect().catch(() => undefined);
    await this.console?.app.stop();
    // Orchestrator first, the sandbox last, so in-flight work can finish against it.
    for (const app of [...APP_NAMES].reverse()) {
      await Promise.all(this.replicas[app].map((r) => r.stop('SIGTERM')));
    }
    await Promise.all(this.balancers.map((b) => b.stop()));
  }
}
