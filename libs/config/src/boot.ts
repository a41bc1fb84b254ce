import { ConfigError, ConfigShape, ResolvedConfig, loadConfig } from './config';

/**
 * The one place that reads `process.env` (DEVELOPERS.md: no process.env outside libs/config).
 * An app's main calls this before creating its Nest application: a bad variable stops the
 * process with exit code 78 (EX_CONFIG) and a message naming each variable.
 */
export function loadConfigOrExit<S extends ConfigShape>(app: string, shape: S): ResolvedConfig<S> {
  try {
    return loadConfig(app, shape, process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
}

/** Read-only snapshot of the environment, for libraries and tools that take an Environment. */
export function processEnvironment(): Readonly<Record<string, string | undefined>> {
  return { ...process.env };
}
