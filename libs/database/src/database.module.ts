import {
  DynamicModule,
  Inject,
  Injectable,
  Module,
  OnApplicationShutdown,
  Optional,
} from '@nestjs/common';
import { DatabaseHealthCheck } from '@payments/observability';
import { ROOT_LOGGER } from '@payments/logging';
import type { Logger } from 'pino';
import { DataSource } from 'typeorm';
import { DataSourceSettings, createDataSource } from './data-source';
import { runMigrations } from './migrate';

export interface DatabaseModuleOptions extends DataSourceSettings {
  /** Apply pending migrations (under the advisory lock) before the app starts. */
  readonly migrateOnBoot: boolean;
}

/** A HealthCheck for the app's DataSource, to list under readiness with provideHealthChecks. */
export const DATABASE_HEALTH_CHECK = Symbol('DATABASE_HEALTH_CHECK');

/**
 * Closes the pool in onApplicationShutdown, i.e. after every beforeApplicationShutdown hook
 * (the Kafka consumer stops there), so in-flight handlers can still commit.
 */
@Injectable()
class DataSourceCloser implements OnApplicationShutdown {
  constructor(
    private readonly dataSource: DataSource,
    @Optional() @Inject(ROOT_LOGGER) private readonly logger?: Logger,
  ) {}

  async onApplicationShutdown(): Promise<void> {
    if (!this.dataSource.isInitialized) return;
    await this.dataSource.destroy();
    this.logger?.info('database: connection pool closed');
  }
}

/**
 * Provides the app's TypeORM `DataSource` (inject it by class) and DATABASE_HEALTH_CHECK;
 * connects at boot and, when `migrateOnBoot`, runs migrations first. Global, so repositories in
 * any module can inject the DataSource.
 */
@Module({})
export class DatabaseModule {
  static forRoot(options: DatabaseModuleOptions): DynamicModule {
    return {
      module: DatabaseModule,
      global: true,
      providers: [
        {
          provide: DataSource,
          inject: [{ token: ROOT_LOGGER, optional: true }],
          useFactory: async (logger?: Logger): Promise<DataSource> => {
            const dataSource = createDataSource(options);
            await dataSource.initialize();
            if (options.migrateOnBoot) {
              try {
                await runMigrations(dataSource, { info: (message) => logger?.info(message) });
              } catch (error) {
                await dataSource.destroy(); // an open pool would keep the failed process alive
                throw error;
              }
            }
            return dataSource;
          },
        },
        {
          provide: DATABASE_HEALTH_CHECK,
          inject: [DataSource],
          useFactory: (dataSource: DataSource) => new DatabaseHealthCheck(dataSource),
        },
        DataSourceCloser,
      ],
      exports: [DataSource, DATABASE_HEALTH_CHECK],
    };
  }
}
