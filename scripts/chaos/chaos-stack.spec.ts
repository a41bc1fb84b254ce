import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { OwnBroker } from '../stack/infra';
import { type ChaosConfig, type ChaosEnvironment, DEFAULT_FAULTS } from './chaos-config';
import { chaosStackOptions } from './chaos-stack';
import { chaosDayClose } from './day-close';

describe('chaosStackOptions: the day close’s settings reach the orchestrator only when asked for', () => {
  const workDir = mkdtempSync(path.join(tmpdir(), 'chaos-stack-spec-'));
  afterAll(() => rmSync(workDir, { recursive: true, force: true }));
  const config = (dayClose: boolean): ChaosConfig => ({
    commands: 10,
    ratePerSecond: 1,
    seed: 1,
    actions: [],
    faults: DEFAULT_FAULTS,
    quietMaxSeconds: 10,
    neverReceivedSeconds: 5,
    unknownAlertSeconds: 45,
    unknownCards: 0,
    gatewayDelayMs: 0,
    logLevel: 'info',
    livenessPeriodMs: 0,
    replicas: 1,
    payoutDailyLimitMinor: 1_000,
    approvalWindowSeconds: 20,
    dayClose,
  });
  const env: ChaosEnvironment = {
    broker: { brokers: '127.0.0.1:1', cluster: false } as unknown as OwnBroker,
    orchestratorDatabaseUrl: 'postgres://o',
    adapterDatabaseUrl: 'postgres://a',
    log: () => undefined,
  };
  const orchestratorEnv = (c: ChaosConfig) =>
    chaosStackOptions(c, env, workDir, 'charge-again', chaosDayClose(c)?.env).env?.orchestrator ??
    {};

  it('off (the default): no clock control, no admin tokens, no reconciliation pace', () => {
    const off = orchestratorEnv(config(false));
    for (const name of [
      'TEST_CONTROLS_ENABLED',
      'ADMIN_TOKENS',
      'DAY_CLOSE_ENABLED',
      'RECONCILIATION_RATE_PER_SECOND',
      'RECONCILIATION_TICK_MS',
    ])
      expect(off).not.toHaveProperty(name);
  });

  it('on: the clock control, an operator, no scheduled close, the pace (the adapter’s default budget of 5/s, one replica)', () => {
    expect(orchestratorEnv(config(true))).toMatchObject({
      TEST_CONTROLS_ENABLED: 'true',
      ADMIN_TOKENS: expect.stringContaining('operator'),
      DAY_CLOSE_ENABLED: 'false',
      RECONCILIATION_RATE_PER_SECOND: '5',
    });
  });
});
