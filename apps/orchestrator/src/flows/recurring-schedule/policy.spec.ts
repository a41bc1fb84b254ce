import { ConfigError, loadConfig } from '@payments/config';
import { orchestratorConfigShape } from '../../config';
import { schedulePolicy } from './policy';

const load = (env: Record<string, string>) =>
  loadConfig('orchestrator', orchestratorConfigShape, env);

describe('schedule policy from SCHEDULE_DUNNING_RETRY_SECONDS', () => {
  it('defaults to retries after 1, 3 and 7 days', () => {
    expect(schedulePolicy(load({})).retryDelaysMs).toEqual([1, 3, 7].map((d) => d * 86_400_000));
  });

  it('takes a comma-separated list of seconds, or none', () => {
    const env = { SCHEDULE_DUNNING_RETRY_SECONDS: '60, 120' };
    expect(schedulePolicy(load(env)).retryDelaysMs).toEqual([60_000, 120_000]);
    const none = { SCHEDULE_DUNNING_RETRY_SECONDS: 'none' };
    expect(schedulePolicy(load(none)).retryDelaysMs).toEqual([]);
  });

  it('refuses anything else, naming the variable', () => {
    expect(() => load({ SCHEDULE_DUNNING_RETRY_SECONDS: '1d,3d' })).toThrow(ConfigError);
    expect(() => load({ SCHEDULE_DUNNING_RETRY_SECONDS: '0' })).toThrow(
      /SCHEDULE_DUNNING_RETRY_SECONDS/,
    );
  });
});

describe('schedule policy: SCHEDULE_GATEWAY_REGISTRATION_ENDPOINTS', () => {
  it('registers no endpoint by default', () => {
    expect(schedulePolicy(load({})).gatewayRegistrationEndpoints).toEqual([]);
  });

  it('takes a comma-separated list of endpoint ids', () => {
    const policy = schedulePolicy(load({ SCHEDULE_GATEWAY_REGISTRATION_ENDPOINTS: '1113, 2111' }));
    expect(policy.gatewayRegistrationEndpoints).toEqual(['1113', '2111']);
  });

  it('refuses an id that is not an endpoint id, naming the variable', () => {
    expect(() => load({ SCHEDULE_GATEWAY_REGISTRATION_ENDPOINTS: '1113,abc' })).toThrow(
      /SCHEDULE_GATEWAY_REGISTRATION_ENDPOINTS/,
    );
  });
});

describe('schedule policy: the shared operation rules of the registration and the charges', () => {
  it('takes the alert time, the no-trace window, the reused-order rule and the own-limit wait every gateway flow takes', () => {
    const policy = schedulePolicy(
      load({
        UNKNOWN_ALERT_SECONDS: '120',
        NEVER_RECEIVED_RESEND_SECONDS: '30',
        GATEWAY_REFUSES_REUSED_ORDER_ID_ENDPOINTS: '1113, 1213',
        OWN_LIMIT_WAIT_SECONDS: '90',
      }),
    );
    expect(policy).toMatchObject({
      unknownAlertAfterMs: 120_000,
      neverReceivedAfterMs: 30_000,
      gatewayRefusesReusedOrderId: ['1113', '1213'],
      ownLimitWaitMs: 90_000,
    });
    expect(schedulePolicy(load({})).unknownAlertAfterMs).toBe(3_600_000);
    // The safe default: no endpoint's gateway is taken to refuse a reused client_orderid.
    expect(schedulePolicy(load({})).gatewayRefusesReusedOrderId).toEqual([]);
  });
});
