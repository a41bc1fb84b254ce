import { ConfigError, describeConfig, loadConfig } from '@payments/config';
import { consoleConfigShape, sessionSecret } from './config';

const SECRET = 'f'.repeat(40);

describe('console configuration', () => {
  it('needs the admin API URL and a long session secret, naming each without echoing the secret', () => {
    let error: unknown;
    try {
      loadConfig('console', consoleConfigShape, { CONSOLE_SESSION_SECRET: 'short-secret' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as Error).message;
    expect(message).toContain('CONSOLE_ADMIN_API_URL');
    expect(message).toContain('CONSOLE_SESSION_SECRET');
    expect(message).not.toContain('short-secret');
  });

  it('defaults to port 3005, 8-hour sessions idle for at most 30 minutes, 5 failed sign-ins per 15 minutes and a Secure cookie; the secret is masked when logged', () => {
    const config = loadConfig('console', consoleConfigShape, {
      CONSOLE_ADMIN_API_URL: 'http://orchestrator:3001',
      CONSOLE_SESSION_SECRET: SECRET,
    });
    expect(config.http.port).toBe(3005);
    expect(config.session).toEqual({
      secret: SECRET,
      ttlSeconds: 28_800,
      idleSeconds: 1_800,
      signInMaxFailures: 5,
      signInWindowSeconds: 900,
      secureCookie: true,
    });
    expect(sessionSecret(config)).toBe(SECRET);
    expect(JSON.stringify(describeConfig(consoleConfigShape, config))).not.toContain(SECRET);
  });

  it('reads the secret from CONSOLE_SESSION_SECRET_FILE (a mounted Secret), exactly one of the two', () => {
    const base = { CONSOLE_ADMIN_API_URL: 'http://orchestrator:3001' };
    const fromFile = loadConfig('console', consoleConfigShape, {
      ...base,
      CONSOLE_SESSION_SECRET_FILE: '/etc/secret',
    });
    expect(sessionSecret(fromFile, () => `${SECRET}\n`)).toBe(SECRET);
    expect(() => sessionSecret(fromFile, () => 'short\n')).toThrow(/CONSOLE_SESSION_SECRET_FILE/);
    const neither = loadConfig('console', consoleConfigShape, base);
    expect(() => sessionSecret(neither)).toThrow(ConfigError);
    const both = loadConfig('console', consoleConfigShape, {
      ...base,
      CONSOLE_SESSION_SECRET: SECRET,
      CONSOLE_SESSION_SECRET_FILE: '/etc/secret',
    });
    expect(() => sessionSecret(both, () => SECRET)).toThrow(/not both/);
  });
});
