import { z } from 'zod';
import { ConfigError, describeConfig, envVar, listVariables, loadConfig, MASK } from './config';
import { brokerList, bool, port, postgresUrl } from './schemas';

const shape = {
  http: { port: envVar('HTTP_PORT', port(3000)) },
  kafka: {
    brokers: envVar('KAFKA_BROKERS', brokerList('127.0.0.1:9092'), {
      description: 'a comma-separated list of host:port',
    }),
  },
  database: { url: envVar('DATABASE_URL', postgresUrl('postgres://postgres@127.0.0.1/x')) },
  controlKey: envVar('CONTROL_KEY', z.string().min(8, 'at least 8 characters'), { secret: true }),
  enabled: envVar('FEATURE_ENABLED', bool(false)),
};

describe('loadConfig', () => {
  it('builds a typed object with defaults', () => {
    const config = loadConfig('test-app', shape, { CONTROL_KEY: 'abcdefgh1234' });
    expect(config.http.port).toBe(3000);
    expect(config.kafka.brokers).toEqual(['127.0.0.1:9092']);
    expect(config.enabled).toBe(false);
    expect(Object.isFrozen(config.http)).toBe(true);
  });

  it('coerces and splits values from the environment', () => {
    const config = loadConfig('test-app', shape, {
      HTTP_PORT: '8081',
      KAFKA_BROKERS: 'a:1, b:2',
      CONTROL_KEY: 'abcdefgh1234',
      FEATURE_ENABLED: 'yes',
    });
    expect(config.http.port).toBe(8081);
    expect(config.kafka.brokers).toEqual(['a:1', 'b:2']);
    expect(config.enabled).toBe(true);
  });

  it('rejects a bad value with a message naming the variable and the expectation', () => {
    const attempt = () =>
      loadConfig('test-app', shape, {
        HTTP_PORT: 'eighty',
        KAFKA_BROKERS: 'not a broker',
        CONTROL_KEY: 'abcdefgh1234',
      });
    expect(attempt).toThrow(ConfigError);
    try {
      attempt();
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toContain('HTTP_PORT: expected a TCP port number (1-65535), got "eighty"');
      expect(message).toContain(
        'KAFKA_BROKERS: expected a comma-separated list of host:port, got "not a broker"',
      );
      expect((error as ConfigError).problems).toHaveLength(2);
    }
  });

  it('reports a missing required variable as not set', () => {
    expect(() => loadConfig('test-app', shape, {})).toThrow(
      /CONTROL_KEY: expected .* \(it is not set\)/,
    );
  });

  it('never echoes a secret in an error', () => {
    try {
      loadConfig('test-app', shape, { CONTROL_KEY: 'short' });
      throw new Error('should have thrown');
    } catch (error) {
      expect((error as Error).message).toContain(
        'CONTROL_KEY: expected at least 8 characters (its value is secret and not shown)',
      );
      expect((error as Error).message).not.toContain('short"');
    }
  });

  it('masks secrets when described', () => {
    const config = loadConfig('test-app', shape, { CONTROL_KEY: 'super-secret-key' });
    const printed = JSON.stringify(describeConfig(shape, config));
    expect(printed).not.toContain('super-secret-key');
    expect(describeConfig(shape, config).controlKey).toBe(MASK);
    expect(listVariables(shape).map((v) => v.name)).toEqual([
      'HTTP_PORT',
      'KAFKA_BROKERS',
      'DATABASE_URL',
      'CONTROL_KEY',
      'FEATURE_ENABLED',
    ]);
  });
});
