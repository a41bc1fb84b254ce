import type { DynamicModule, INestApplication, NestApplicationOptions } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import {
  ConfigShape,
  EnvVar,
  ResolvedConfig,
  describeConfig,
  loadConfigOrExit,
} from '@payments/config';
import { Logger, LoggingOptions, createLogger, loggingOptions } from '@payments/logging';

/** The variables boot itself reads; every app's configuration shape declares them. */
export interface BootShape extends ConfigShape {
  readonly version: EnvVar<string>;
  readonly log: { readonly logLevel: EnvVar<string>; readonly logPretty: EnvVar<boolean> };
  readonly http: { readonly port: EnvVar<number> };
}

/** The pino logger of the boot messages, handed to the app so that it logs through the same one. */
export type BootLogger = ReturnType<typeof createLogger>;

/** A class of error that says the configuration is wrong (EX_CONFIG), not that boot failed. */
export type ConfigErrorClass = abstract new (...args: never[]) => Error;

export interface HttpAppSpec<S extends BootShape, P> {
  /** On every log line and in the boot messages (`<service> listening on port <port>`). */
  readonly service: string;
  /** Loaded from the environment; a bad variable stops boot with exit 78 naming it (stderr). */
  readonly configShape: S;
  /**
   * What the app derives from its configuration before anything starts (secrets, keys,
   * merchants). Throwing one of `configErrors` is a bad configuration like a bad variable: its
   * message on stderr, exit 78. Without `prepare` the app gets `undefined`.
   */
  readonly prepare?: (config: ResolvedConfig<S>) => P;
  readonly configErrors?: readonly ConfigErrorClass[];
  /** Fields (never secrets) added to the `configuration` and the `listening` log lines. */
  readonly details?: (config: ResolvedConfig<S>, prepared: P) => Record<string, unknown>;
  /**
   * The application, not yet listening: `createNestApp(AppModule.forRoot(...))`, or the app's
   * own factory when it needs more HTTP setup. Shutdown hooks and `listen` are done here.
   */
  readonly createApp: (
    config: ResolvedConfig<S>,
    prepared: P,
    logger: BootLogger,
  ) => Promise<INestApplication>;
  /** Where log lines go; stdout by default. Tests pass a capturing stream. */
  readonly logDestination?: LoggingOptions['destination'];
}

/**
 * A Nest app on Express that logs through the module's pino logger (LoggingModule): messages
 * written while it is created are buffered until then; a failing provider rejects instead of
 * aborting the process, so that boot can log it.
 */
export async function createNestApp(
  module: DynamicModule,
  options: NestApplicationOptions = {},
): Promise<NestExpressApplication> {
  const app = await NestFactory.create<NestExpressApplication>(module, {
    bufferLogs: true,
    abortOnError: false,
    ...options,
  });
  app.useLogger(app.get(Logger));
  return app;
}

/**
 * Boots one app's HTTP process, the same way for every app: configuration (exit 78 naming the
 * bad variable), what the app prepares from it (exit 78 on its configuration errors), the boot
 * logger, the masked configuration at debug, the app, shutdown hooks, listen, one
 * `<service> listening on port <port>` line. Any failure after that point is logged as fatal and
 * exits 1. Nothing is written to stderr unless the configuration is wrong.
 */
export async function bootstrapHttpApp<S extends BootShape, P = undefined>(
  spec: HttpAppSpec<S, P>,
): Promise<void> {
  const { service } = spec;
  const config = loadConfigOrExit(service, spec.configShape);
  const prepared = prepareOrExit(spec, config);
  const boot: ResolvedConfig<BootShape> = config;
  const logger = createLogger({
    ...loggingOptions(service, boot),
    destination: spec.logDestination,
  });
  const details = spec.details?.(config, prepared) ?? {};
  logger.debug({ config: describeConfig(spec.configShape, config), ...details }, 'configuration');
  try {
    const app = await spec.createApp(config, prepared, logger);
    // SIGTERM/SIGINT: onModuleDestroy, beforeApplicationShutdown (consumers stop), HTTP server
    // close, onApplicationShutdown (producers, pools, databases close), then exit 0 (flushes pino).
    app.enableShutdownHooks(['SIGTERM', 'SIGINT'], { useProcessExit: true });
    await app.listen(boot.http.port);
    logger.info(
      { url: await app.getUrl(), ...details },
      `${service} listening on port ${boot.http.port}`,
    );
  } catch (error) {
    logger.fatal({ err: error }, `${service} failed to start`);
    process.exit(1);
  }
}

function prepareOrExit<S extends BootShape, P>(
  spec: HttpAppSpec<S, P>,
  config: ResolvedConfig<S>,
): P {
  // Without `prepare`, P is `undefined` (its default): nothing to derive.
  if (!spec.prepare) return undefined as P;
  try {
    return spec.prepare(config);
  } catch (error) {
    if (error instanceof Error && spec.configErrors?.some((type) => error instanceof type)) {
      // Like a bad variable (loadConfigOrExit): EX_CONFIG, the message names what is wrong.
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
}
