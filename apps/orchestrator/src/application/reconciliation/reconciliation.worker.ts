import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { BackgroundLoop } from '@payments/core';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../../config';
import { ReconciliationService } from './reconciliation.service';

/**
 * Drives reconciliation every RECONCILIATION_TICK_MS: starts the scheduled run of the current
 * window (once per window across replicas: the run id derives from the window, and the runs
 * table's unique index refuses a second), then sends the due status queries. Safe on every
 * replica: one dispatcher at a time per database (advisory lock in the service).
 */
@Injectable()
export class ReconciliationWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(ReconciliationWorker.name);
  private readonly loop: BackgroundLoop;

  constructor(
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
    private readonly reconciliation: ReconciliationService,
  ) {
    const { tickMs } = config.reconciliation;
    this.loop = new BackgroundLoop({
      runOnce: async () => {
        await this.reconciliation.startScheduledRun();
        await this.reconciliation.dispatch();
        // Always a tick between rounds: the per-endpoint rate is counted per tick.
        return 'idle';
      },
      idleMs: tickMs,
      // A failing database is not asked every tick: doubling waits, up to a minute.
      backoffMs: (failures) => Math.min(tickMs * 2 ** failures, 60_000),
      onError: (error) => this.logger.warn(`reconciliation worker: round failed: ${String(error)}`),
    });
  }

  onApplicationBootstrap(): void {
    if (this.config.reconciliation.workerEnabled) this.loop.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }
}
