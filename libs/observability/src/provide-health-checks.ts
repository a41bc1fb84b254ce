import type { FactoryProvider, InjectionToken, Provider } from '@nestjs/common';
import { HealthCheck, LIVENESS_CHECKS, READINESS_CHECKS } from './health-check';

/** A check built by a factory from injected dependencies. */
export interface HealthCheckFactory {
  // `never[]` accepts any factory signature without `any`; Nest supplies the injected values.
  readonly useFactory: (...deps: never[]) => HealthCheck | Promise<HealthCheck>;
  readonly inject?: InjectionToken[];
}

/** Either the token of a provider that is a HealthCheck (e.g. a class), or a factory. */
export type HealthCheckSource = InjectionToken | HealthCheckFactory;

export interface HealthCheckLists {
  readonly liveness?: readonly HealthCheckSource[];
  readonly readiness?: readonly HealthCheckSource[];
}

function isFactory(source: HealthCheckSource): source is HealthCheckFactory {
  return typeof source === 'object' && source !== null && 'useFactory' in source;
}

let sequence = 0;

function listProvider(token: symbol, kind: string, sources: readonly HealthCheckSource[]) {
  const providers: Provider[] = [];
  const tokens: InjectionToken[] = sources.map((source) => {
    if (!isFactory(source)) return source;
    const inner = Symbol(`${kind}_CHECK_${++sequence}`);
    providers.push({
      provide: inner,
      useFactory: source.useFactory as (...deps: unknown[]) => HealthCheck,
      inject: source.inject ?? [],
    });
    return inner;
  });
  const list: FactoryProvider<HealthCheck[]> = {
    provide: token,
    useFactory: (...checks: HealthCheck[]) => checks,
    inject: tokens,
  };
  return [...providers, list];
}

/**
 * Providers for an app module: the LIVENESS_CHECKS and READINESS_CHECKS lists the health
 * endpoints report. Call it once per app, listing every component's check, e.g.
 *   providers: [...provideHealthChecks({ readiness: [DATABASE_HEALTH_CHECK, KafkaBrokerCheck] })]
 * The listed tokens must be visible in that module (provided there or exported by an import).
 */
export function provideHealthChecks(lists: HealthCheckLists): Provider[] {
  return [
    ...listProvider(LIVENESS_CHECKS, 'LIVENESS', lists.liveness ?? []),
    ...listProvider(READINESS_CHECKS, 'READINESS', lists.readiness ?? []),
  ];
}
