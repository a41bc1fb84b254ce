import { workerBrokers } from './worker-brokers';

describe('workerBrokers', () => {
  const list = '127.0.0.1:19092 127.0.0.1:19094 127.0.0.1:19096';

  it('gives worker N the Nth broker of KAFKA_WORKER_BROKERS', () => {
    const env = { KAFKA_WORKER_BROKERS: list, KAFKA_BROKERS: '127.0.0.1:19092' };
    expect(workerBrokers({ ...env, JEST_WORKER_ID: '1' })).toBe('127.0.0.1:19092');
    expect(workerBrokers({ ...env, JEST_WORKER_ID: '2' })).toBe('127.0.0.1:19094');
    expect(workerBrokers({ ...env, JEST_WORKER_ID: '3' })).toBe('127.0.0.1:19096');
  });

  it('refuses a worker beyond the list instead of sharing a broker', () => {
    expect(() => workerBrokers({ KAFKA_WORKER_BROKERS: list, JEST_WORKER_ID: '4' })).toThrow(
      /worker 4 has no broker of its own/,
    );
  });

  it('keeps KAFKA_BROKERS for a run in band, refuses a second worker on it', () => {
    expect(workerBrokers({ KAFKA_BROKERS: '10.0.0.1:9092', JEST_WORKER_ID: '1' })).toBe(
      '10.0.0.1:9092',
    );
    expect(workerBrokers({ KAFKA_BROKERS: '10.0.0.1:9092' })).toBe('10.0.0.1:9092');
    expect(() => workerBrokers({ KAFKA_BROKERS: '10.0.0.1:9092', JEST_WORKER_ID: '2' })).toThrow(
      /would share/,
    );
  });
});
