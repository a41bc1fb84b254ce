/**
 * The integration and e2e tiers' test environment: Node's, with KAFKA_BROKERS set to this jest
 * worker's own broker (scripts/stack/worker-brokers.ts) before the test file's sandbox copies the
 * environment, so the tests, their in-process apps and the processes they spawn (with or without
 * an explicit env) all use it.
 */
import type { EnvironmentContext, JestEnvironmentConfig } from '@jest/environment';
import { TestEnvironment } from 'jest-environment-node';
import { workerBrokers } from '../../scripts/stack/worker-brokers';

export default class WorkerBrokerEnvironment extends TestEnvironment {
  constructor(config: JestEnvironmentConfig, context: EnvironmentContext) {
    const brokers = workerBrokers(process.env);
    if (brokers !== undefined) process.env.KAFKA_BROKERS = brokers;
    super(config, context);
  }
}
