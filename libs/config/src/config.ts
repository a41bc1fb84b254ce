import { z } from 'zod';

/**
 * One validated, typed configuration object per app, built from the environment once at boot
 * (STYLE.md practice 6). A variable is declared with `envVar(NAME, zodSchema)`; a shape is a tree
 * of such declarations; `loadConfig` resolves the whole tree or throws one `ConfigError` listing
 * every bad variable by name with what was expected. Secrets are marked at declaration and are
 * masked by `describeConfig` and never echoed in error messages.
 */
export interface EnvVar<T> {
  readonly kind: 'env-var';
  readonly name: string;
  readonly schema: z.ZodType<T>;
  readonly secret: boolean;
  readonly description: string;
}

export interface EnvVarOptions {
  /** Masked whenever configuration is printed; its value never appears in errors. */
  secret?: boolean;
  /** What is expected, used in error messages and `npm run config:describe`-style output. */
  description?: string;
}

export function envVar<S extends z.ZodType>(
  name: string,
  schema: S,
  options: EnvVarOptions = {},
): EnvVar<z.output<S>> {
  return {
    kind: 'env-var',
    name,
    schema: schema as unknown as z.ZodType<z.output<S>>,
    secret: options.secret ?? false,
    description: options.description ?? '',
  };
}

export interface ConfigShape {
  readonly [key: string]: EnvVar<unknown> | ConfigShape;
}

export type ResolvedConfig<S> = {
  readonly [K in keyof S]: S[K] extends EnvVar<infer T>
    ? T
    : S[K] extends ConfigShape
      ? ResolvedConfig<S[K]>
      : never;
};

export interface ConfigProblem {
  readonly variable: string;
  readonly expected: string;
  /** The offending value, or undefined when it was missing or is a secret. */
  readonly got: string | undefined;
  /** Whether the variable was set at all (a secret's bad value is set but not shown). */
  readonly set?: boolean;
}

export class ConfigError extends Error {
  readonly code = 'CONFIG_INVALID';
  constructor(
    readonly app: string,
    readonly problems: readonly ConfigProblem[],
  ) {
    super(
      `${app}: invalid configuration\n` +
        problems
          .map(
            (p) =>
              `  - ${p.variable}: expected ${p.expected}` +
              (p.set === false || (p.set === undefined && p.got === undefined)
                ? ' (it is not set)'
                : p.got === undefined
                  ? ' (its value is secret and not shown)'
                  : `, got ${JSON.stringify(p.got)}`),
          )
          .join('\n'),
    );
    this.name = 'ConfigError';
  }
}

export type Environment = Readonly<Record<string, string | undefined>>;

function isEnvVar(node: EnvVar<unknown> | ConfigShape): node is EnvVar<unknown> {
  return (node as EnvVar<unknown>).kind === 'env-var';
}

function expectation(spec: EnvVar<unknown>, issue: z.core.$ZodIssue | undefined): string {
  if (spec.description) return spec.description;
  return issue?.message ?? 'a valid value';
}

/** Resolves every declared variable from `env`; throws ConfigError naming all bad ones at once. */
export function loadConfig<S extends ConfigShape>(
  app: string,
  shape: S,
  env: Environment,
): ResolvedConfig<S> {
  const problems: ConfigProblem[] = [];
  const walk = (node: ConfigShape): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(node)) {
      if (!isEnvVar(child)) {
        out[key] = walk(child);
        continue;
      }
      const raw = env[child.name];
      const value = raw === '' ? undefined : raw;
      const parsed = child.schema.safeParse(value);
      if (parsed.success) {
        out[key] = parsed.data;
      } else {
        problems.push({
          variable: child.name,
          expected: expectation(child, parsed.error.issues[0]),
          got: child.secret ? undefined : value,
          set: value !== undefined,
        });
      }
    }
    return out;
  };
  const resolved = walk(shape);
  if (problems.length > 0) throw new ConfigError(app, problems);
  return deepFreeze(resolved) as ResolvedConfig<S>;
}

export const MASK = '***';

/** The configuration as it may be printed or logged: secrets replaced by `***`. */
export function describeConfig<S extends ConfigShape>(
  shape: S,
  config: ResolvedConfig<S>,
): Record<string, unknown> {
  const walk = (node: ConfigShape, values: Record<string, unknown>): Record<string, unknown> => {
    const out: Record<string, unknown> = {};
    for (const [key, child] of Object.entries(node)) {
      const value = values[key];
      if (isEnvVar(child)) {
        out[key] = child.secret && value !== undefined ? MASK : value;
      } else {
        out[key] = walk(child, (value ?? {}) as Record<string, unknown>);
      }
    }
    return out;
  };
  return walk(shape, config);
}

/** Every variable a shape reads, for documentation and `--help` output. */
export function listVariables(shape: ConfigShape): EnvVar<unknown>[] {
  return Object.values(shape).flatMap((child) =>
    isEnvVar(child) ? [child] : listVariables(child),
  );
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value as Record<string, unknown>)) deepFreeze(inner);
  }
  return value;
}
