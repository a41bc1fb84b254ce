import {
  type PaymentStackOptions,
  SANDBOX_MERCHANT,
  sandboxMerchantsWithDelay,
} from '../stack/payment-stack';
import type { ChaosConfig, ChaosEnvironment } from './chaos-config';
import { scheduleEnv } from './schedule-plan';

/** The status burst of each adapter replica in the population phase: one token, and one reserved for urgent queries. */
export const STATUS_BURST_PER_REPLICA = 2;

/**
 * The stack a chaos run starts (chaos-run.ts): every app configured from the run's config as an
 * operator would (environment variables), on the run's broker and databases; `dayClose`: the
 * orchestrator's settings of the day close at the end, when the run asked for it (day-close.ts
 * `chaosDayClose`; none by default).
 */
export function chaosStackOptions(
  config: ChaosConfig,
  env: ChaosEnvironment,
  workDir: string,
  reusedClientOrderId: NonNullable<ChaosConfig['reusedClientOrderId']>,
  dayClose: Readonly<Record<string, string>> = {},
): PaymentStackOptions {
  const { broker } = env;
  // On a cluster the apps create their topics replicated (RF 3, min ISR 2) and write with acks=all.
  const replication: Record<string, string> = broker.cluster
    ? { KAFKA_REPLICATION_FACTOR: '3', KAFKA_MIN_INSYNC_REPLICAS: '2' }
    : {};
  return {
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
        ...dayClose,
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
  };
}
