import { Controller, Get, Module, OnApplicationShutdown } from '@nestjs/common';
import { z } from 'zod';
import { ConfigError, commonVars, envVar } from '@payments/config';
import { LoggingModule } from '@payments/logging';
import { BootLogger, bootstrapHttpApp, createNestApp } from './http-app';

const SERVICE = 'boot-test';

const shape = {
  version: envVar('BOOT_TEST_VERSION', z.string().default('1.2.3')),
  http: { port: envVar('BOOT_TEST_PORT', z.coerce.number().int().min(0).default(0)) },
  log: commonVars,
  token: envVar('BOOT_TEST_TOKEN', z.string().default('s3cret-value'), { secret: true }),
};

class ExitCalled extends Error {
  constructor(readonly code: number | string | null | undefined) {
    super(`process.exit(${String(code)})`);
  }
}

let shutdowns = 0;

@Controller('ping')
class PingController {
  @Get()
  ping(): string {
    return 'pong';
  }
}

@Module({ controllers: [PingController] })
class PingModule implements OnApplicationShutdown {
  onApplicationShutdown(): void {
    shutdowns += 1;
  }
}

function appModule(logger: BootLogger) {
  return {
    module: PingModule,
    imports: [
      LoggingModule.forRoot({
        service: SERVICE,
        version: 'x',
        level: 'info',
        pretty: false,
        logger,
      }),
    ],
  };
}

interface LogLine {
  readonly level: string;
  readonly msg: string;
  readonly [key: string]: unknown;
}

let lines: LogLine[];
const destination = { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) };
let stderr: string;

beforeEach(() => {
  lines = [];
  stderr = '';
  shutdowns = 0;
  process.env.LOG_LEVEL = 'debug';
  jest.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stderr += chunk.toString();
    return true;
  });
});

afterEach(() => {
  jest.restoreAllMocks();
  delete process.env.LOG_LEVEL;
  delete process.env.BOOT_TEST_PORT;
});

/** process.exit stops the boot where it is called, as it would. */
function exitThrows(): jest.SpyInstance {
  return jest.spyOn(process, 'exit').mockImplementation((code) => {
    throw new ExitCalled(code);
  });
}

describe('bootstrapHttpApp', () => {
  it('boots: masked configuration, one listening line with the details, then exit 0 on SIGTERM after the shutdown hooks', async () => {
    const exit = jest.spyOn(process, 'exit').mockImplementation(() => undefined as never);
    const before = new Set(process.listeners('SIGTERM'));
    await bootstrapHttpApp({
      service: SERVICE,
      configShape: shape,
      prepare: (config) => ({ prepared: config.version }),
      details: (_, prepared) => ({ extra: prepared.prepared }),
      createApp: (_config, _prepared, logger) => createNestApp(appModule(logger)),
      logDestination: destination,
    });
    const configuration = lines.find((l) => l.msg === 'configuration');
    expect(configuration).toMatchObject({
      level: 'debug',
      service: SERVICE,
      version: '1.2.3',
      extra: '1.2.3',
      config: { token: '***', http: { port: 0 } },
    });
    const listening = lines.find((l) => l.msg === `${SERVICE} listening on port 0`);
    expect(listening).toMatchObject({ level: 'info', extra: '1.2.3' });
    const url = String(listening?.url);
    const response = await fetch(`${url}/ping`);
    expect(await response.text()).toBe('pong');
    expect(stderr).toBe('');

    // What a SIGTERM runs (called directly: a real signal would reach the test runner too).
    const cleanup = process.listeners('SIGTERM').find((l) => !before.has(l));
    expect(cleanup).toBeDefined();
    await (cleanup as (signal: string) => Promise<void>)('SIGTERM');
    expect(shutdowns).toBe(1);
    expect(exit).toHaveBeenCalledWith(0);
    expect(process.listeners('SIGTERM').some((l) => !before.has(l))).toBe(false);
  });

  it('refuses a malformed variable with exit 78 naming it on stderr, before anything else', async () => {
    exitThrows();
    process.env.BOOT_TEST_PORT = 'eighty';
    const createApp = jest.fn();
    await expect(
      bootstrapHttpApp({
        service: SERVICE,
        configShape: shape,
        createApp,
        logDestination: destination,
      }),
    ).rejects.toEqual(new ExitCalled(78));
    expect(stderr).toContain('BOOT_TEST_PORT');
    expect(createApp).not.toHaveBeenCalled();
    expect(lines).toEqual([]);
  });

  it('treats a configuration error of prepare like a bad variable: stderr, exit 78', async () => {
    exitThrows();
    const createApp = jest.fn();
    await expect(
      bootstrapHttpApp({
        service: SERVICE,
        configShape: shape,
        prepare: () => {
          throw new ConfigError(SERVICE, [
            { variable: 'BOOT_TEST_KEYS', expected: 'keys', got: undefined },
          ]);
        },
        configErrors: [ConfigError],
        createApp,
        logDestination: destination,
      }),
    ).rejects.toEqual(new ExitCalled(78));
    expect(stderr).toContain('BOOT_TEST_KEYS');
    expect(createApp).not.toHaveBeenCalled();
  });

  it('lets any other error of prepare through', async () => {
    exitThrows();
    await expect(
      bootstrapHttpApp({
        service: SERVICE,
        configShape: shape,
        prepare: () => {
          throw new TypeError('a bug');
        },
        configErrors: [ConfigError],
        createApp: jest.fn(),
        logDestination: destination,
      }),
    ).rejects.toThrow(TypeError);
    expect(stderr).toBe('');
  });

  it('logs a failing start as fatal and exits 1', async () => {
    exitThrows();
    await expect(
      bootstrapHttpApp({
        service: SERVICE,
        configShape: shape,
        createApp: () => Promise.reject(new Error('database unreachable')),
        logDestination: destination,
      }),
    ).rejects.toEqual(new ExitCalled(1));
    expect(lines.at(-1)).toMatchObject({
      level: 'fatal',
      msg: `${SERVICE} failed to start`,
      err: { message: 'database unreachable' },
    });
    expect(stderr).toBe('');
  });
});
