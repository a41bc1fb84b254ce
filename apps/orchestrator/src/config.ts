import { z } from 'zod';
import {
  endpointIdList,
  bool,
  commonVars,
  tracingVars,
  databaseVars,
  envVar,
  jsonText,
  kafkaVars,
  nonNegativeInt,
  port,
  positiveInt,
  ResolvedConfig,
  versionVar,
} from '@payments/config';
import { AdminTokensSchema } from './domain/admin/admin-tokens';
import { isTimeZone } from './domain/journal/merchant-day';

const AmountLimitsSchema = z.strictObject({
  minMinor: z.number().int().nonnegative().optional(),
  maxMinor: z.number().int().positive().optional(),
  currencies: z
    .array(z.string().regex(/^[A-Z]{3}$/))
    .min(1)
    .optional(),
});

/** `PAYMENT_LIMITS`: JSON `{"default": {…}, "endpoints": {"<endpoint id>": {…}}}`. */
const paymentLimits = jsonText('{"default":{"maxMinor":100000000}}').pipe(
  z.strictObject({
    default: AmountLimitsSchema,
    endpoints: z.record(z.string().min(1), AmountLimitsSchema).optional(),
  }),
);

const PayoutLimitsSchema = AmountLimitsSchema.extend({
  /** Most paid out per endpoint, currency and UTC day (minor units). */
  dailyLimitMinor: z.number().int().positive().optional(),
  /** How long a registered two-step payout waits for its approval. */
  approvalWindowSeconds: z.number().int().positive().optional(),
  /** Four eyes: approvals of a payout above this (minor units) need two people. */
  fourEyesAboveMinor: z.number().int().min(0).optional(),
});

/** `PAYOUT_LIMITS`: JSON `{"default": {…}, "endpoints": {"<endpoint id>": {…}}}`. */
const payoutLimits = jsonText(
  '{"default":{"maxMinor":100000000,"dailyLimitMinor":10000000,"approvalWindowSeconds":600}}',
).pipe(
  z.strictObject({
    default: PayoutLimitsSchema,
    endpoints: z.record(z.string().min(1), PayoutLimitsSchema).optional(),
  }),
);

/** `SCHEDULE_DUNNING_RETRY_SECONDS`: comma-separated delays, e.g. `86400,259200,604800`; `none`: no retry. */
const retryDelays = z
  .string()
  .default('86400,259200,604800')
  .transform((text) => (text.trim() === 'none' ? [] : text.split(',').map((part) => part.trim())))
  .pipe(
    z
      .array(
        z
          .string()
          .regex(/^\d{1,9}$/)
          .transform(Number)
          .pipe(z.number().int().positive()),
      )
      .max(20),
  );

/**
 * `SCHEDULE_GATEWAY_REGISTRATION_ENDPOINTS`: comma-separated endpoint ids whose schedules are
 * registered with the gateway (create-recurring-payment v4) and charged by it; empty: none.
 */
const endpointList = endpointIdList;

/** Everything the orchestrator reads from its environment, validated once at boot. */
export const orchestratorConfigShape = {
  version: versionVar,
  http: { port: envVar('HTTP_PORT', port(3001)) },
  log: commonVars,
  tracing: tracingVars,
  kafka: {
    ...kafkaVars,
    consumerGroup: envVar('KAFKA_CONSUMER_GROUP', z.string().min(1).default('orchestrator'), {
      description: 'consumer group of the commands, results and callbacks consumers',
    }),
  },
  database: databaseVars,
  outbox: {
    relayEnabled: envVar('OUTBOX_RELAY_ENABLED', bool(true), {
      description:
        'true to run the outbox relay in this process (one of true, false, 1, 0, yes, no)',
    }),
    pollMs: envVar('OUTBOX_POLL_MS', positiveInt(1000), {
      description: 'fallback poll of the outbox when no NOTIFY arrives, in ms',
    }),
    batchSize: envVar('OUTBOX_BATCH_SIZE', positiveInt(100), {
      description: 'outbox rows published per round',
    }),
    maxBackoffMs: envVar('OUTBOX_MAX_BACKOFF_MS', positiveInt(30_000), {
      description: 'longest pause after failed publications, in ms',
    }),
  },
  timers: {
    workerEnabled: envVar('TIMER_WORKER_ENABLED', bool(true), {
      description: 'true to run the timer worker in this process',
    }),
    pollMs: envVar('TIMER_POLL_MS', positiveInt(500), {
      description: 'how often due timers are claimed, in ms',
    }),
    batchSize: envVar('TIMER_BATCH_SIZE', positiveInt(50), {
      description: 'timers fired per round at most',
    }),
  },
  limits: envVar('PAYMENT_LIMITS', paymentLimits, {
    description:
      'per-endpoint limits of a sale or preauth, checked before the gateway, as JSON {"default":{"minMinor":…,"maxMinor":…,"currencies":["EUR"]},"endpoints":{"<id>":{…}}} (minor units)',
  }),
  payoutLimits: envVar('PAYOUT_LIMITS', payoutLimits, {
    description:
      'per-endpoint payout rules, checked before the gateway, as JSON {"default":{"minMinor":…,"maxMinor":…,"currencies":["EUR"],"dailyLimitMinor":…,"approvalWindowSeconds":…,"fourEyesAboveMinor":…},"endpoints":{"<id>":{…}}} (minor units; the daily limit is per endpoint, currency and UTC day)',
  }),
  payoutFourEyesAboveMinor: envVar('PAYOUT_FOUR_EYES_ABOVE_MINOR', nonNegativeInt(1_000_000), {
    description:
      'four eyes: the approvals of a two-step payout above this amount (minor units) need two different people, the second with the approver role; the default for every endpoint (PAYOUT_LIMITS may set fourEyesAboveMinor per endpoint or as its default)',
  }),
  policy: {
    holdExpiryAction: envVar('HOLD_EXPIRY_ACTION', z.enum(['void', 'report']).default('void'), {
      description: 'what to do with an authorization not captured in time: void or report',
    }),
    holdExpirySeconds: envVar('HOLD_EXPIRY_SECONDS', nonNegativeInt(7 * 24 * 60 * 60), {
      description: 'seconds after authorization before the hold expires; 0 disables the timer',
    }),
    unknownAlertSeconds: envVar('UNKNOWN_ALERT_SECONDS', positiveInt(60 * 60), {
      description: 'seconds an outcome may stay unknown before the alert event',
    }),
    maxSendAttempts: envVar('GATEWAY_MAX_SEND_ATTEMPTS', positiveInt(5), {
      description: 'sends of a request that was provably not sent before it fails',
    }),
    neverReceivedSeconds: envVar('NEVER_RECEIVED_RESEND_SECONDS', positiveInt(60), {
      description:
        "seconds after an outcome became unknown before the gateway's answer that it has no trace of the request counts: then the request is sent once more if the gateway would refuse the repeat as a duplicate, otherwise (or if the repeat too leaves no trace) the outcome stays unknown with the alert raised",
    }),
    resultDeadlineSeconds: envVar('RESULT_DEADLINE_SECONDS', positiveInt(120), {
      description:
        "seconds a request sent to the gateway may go without its result (the adapter's answer) before its outcome is unknown: then it is polled and, past UNKNOWN_ALERT_SECONDS, alerted (a request or result lost on the way never leaves it requested forever)",
    }),
    gatewayRefusesReusedOrderId: envVar('GATEWAY_REFUSES_REUSED_ORDER_ID_ENDPOINTS', endpointList, {
      description:
        'comma-separated endpoint ids whose gateway answers a request repeated under the same client_orderid with the first order and never charges twice: there a payment, payout or transfer with no trace at the gateway after the window is sent once more; empty (default) = none, such an operation stays unknown with the alert raised (the spec never promises the refusal; a gateway that charges the repeat would charge twice)',
    }),
    ownLimitWaitSeconds: envVar('OWN_LIMIT_WAIT_SECONDS', positiveInt(600), {
      description:
        "seconds a request held back by the gateway-adapter's own breaker or limits may wait for them before it fails as not-sent",
    }),
    statusHintIntervalSeconds: envVar('STATUS_HINT_INTERVAL_SECONDS', nonNegativeInt(60), {
      description: 'at most one status refresh per payment per this many seconds from hints',
    }),
  },
  admin: {
    tokens: envVar('ADMIN_TOKENS', AdminTokensSchema, {
      description:
        'admin API bearer tokens as JSON [{"name":"alice","role":"operator","sha256":"<hex SHA-256 of the token>"}] (roles viewer, operator); none (default) = the admin API is off',
    }),
  },
  testControls: {
    enabled: envVar('TEST_CONTROLS_ENABLED', bool(false), {
      description:
        'true to mount /test-controls (move the orchestrator clock forward); e2e and demo only, never in production',
    }),
    clockOffsetSeconds: envVar('TEST_CLOCK_OFFSET_SECONDS', nonNegativeInt(0), {
      description:
        'with TEST_CONTROLS_ENABLED: the clock starts this many seconds ahead (a replica a test restarts after moving the others: it never handles a message at the real time)',
    }),
  },
  cases: {
    afterAlertHours: envVar('CASE_AFTER_ALERT_HOURS', nonNegativeInt(24), {
      description:
        'hours an alerted operation without a named concern (no trace, amount mismatch: at once) stays unknown before a case is opened for a person to decide',
    }),
    sweepMs: envVar('CASE_SWEEP_MS', positiveInt(5000), {
      description:
        'how often the case worker opens the cases that are due and reopens those a gateway answer contradicted',
    }),
    workerEnabled: envVar('CASE_WORKER_ENABLED', bool(true), {
      description:
        'true to run the case worker here (safe on every replica: one case per saga request)',
    }),
  },
  reconciliation: {
    workerEnabled: envVar('RECONCILIATION_WORKER_ENABLED', bool(true), {
      description:
        'true to run the reconciliation worker here (scheduled runs, pacing of status queries); safe on every replica',
    }),
    intervalSeconds: envVar('RECONCILIATION_INTERVAL_SECONDS', nonNegativeInt(3600), {
      description:
        'length of the window a scheduled reconciliation run covers, one run per window; 0 = no scheduled runs (on demand only)',
    }),
    settleSeconds: envVar('RECONCILIATION_SETTLE_SECONDS', nonNegativeInt(900), {
      description: 'a scheduled window is reconciled once it ended this long ago (sagas settle)',
    }),
    ratePerSecond: envVar('RECONCILIATION_RATE_PER_SECOND', positiveInt(5), {
      description: 'status queries a reconciliation run sends per merchant endpoint per second',
    }),
    maxAttempts: envVar('RECONCILIATION_MAX_ATTEMPTS', positiveInt(20), {
      description:
        'status queries per check (not sent, unknown, still processing) before it is reported unresolved',
    }),
    answerTimeoutSeconds: envVar('RECONCILIATION_ANSWER_TIMEOUT_SECONDS', positiveInt(30), {
      description: 'seconds to wait for the answer to a status query before asking again',
    }),
    tickMs: envVar('RECONCILIATION_TICK_MS', positiveInt(1000), {
      description: 'how often the reconciliation worker looks for due work',
    }),
  },
  finance: {
    merchantTimeZones: envVar(
      'MERCHANT_TIME_ZONES',
      jsonText('{}').pipe(
        z.record(
          z.string().regex(/^\d{1,19}$/),
          z.string().refine(isTimeZone, 'an IANA time zone (Europe/Berlin)'),
        ),
      ),
      {
        description:
          "JSON object endpoint id → IANA time zone: where each merchant's day starts and ends (the journal's day-closed control totals); endpoints not named close in UTC",
      },
    ),
    dayCloseEnabled: envVar('DAY_CLOSE_ENABLED', bool(true), {
      description:
        "true to close merchants' days here once they ended (plus the grace): day-closed with the day's control totals; safe on every replica (a day closes once)",
    }),
    dayCloseGraceSeconds: envVar('DAY_CLOSE_GRACE_SECONDS', nonNegativeInt(900), {
      description:
        "seconds after a merchant's midnight before its day is closed (money events of the day still committing)",
    }),
    dayCloseTickMs: envVar('DAY_CLOSE_TICK_MS', positiveInt(60_000), {
      description:
        'how often the day-close worker looks for days to close and writes the close reports whose reconciliation run completed (the latter even with DAY_CLOSE_ENABLED=false)',
    }),
  },
  schedules: {
    dunningRetrySeconds: envVar('SCHEDULE_DUNNING_RETRY_SECONDS', retryDelays, {
      description:
        'delays in seconds of the dunning retries after a declined schedule cycle, comma-separated, or none; then the schedule is suspended',
    }),
    gatewayRegistrationEndpoints: envVar('SCHEDULE_GATEWAY_REGISTRATION_ENDPOINTS', endpointList, {
      description:
        'comma-separated endpoint ids whose schedules are registered with the gateway (create-recurring-payment v4) and charged by it, never rebilled by the orchestrator; empty (default) = none',
    }),
    gatewayChargeGraceSeconds: envVar(
      'SCHEDULE_GATEWAY_CHARGE_GRACE_SECONDS',
      positiveInt(86_400),
      {
        description:
          "seconds after a registered schedule's cycle time before its charge is asked for by the cycle's client order id (the gateway charges on the date at a time of its own; callbacks can be lost)",
      },
    ),
  },
};

export type OrchestratorConfig = ResolvedConfig<typeof orchestratorConfigShape>;

/** Injection token of the resolved OrchestratorConfig. */
export const ORCHESTRATOR_CONFIG = Symbol('ORCHESTRATOR_CONFIG');
