import { Inject, Injectable } from '@nestjs/common';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../../config';
import { TickingWorker } from '../ticking-worker';
import { ReconciliationService } from './reconciliation.service';

/**
 * Drives reconciliation every RECONCILIATION_TICK_MS: starts the scheduled run of the current
 * window (once per window across replicas: the run id derives from the window, and the runs
 * table's unique index refuses a second), then sends the due status queries (always a tick
 * between rounds: the per-endpoint rate is counted per tick; a failing database is asked after
 * doubling waits, up to a minute). Safe on every replica: one dispatcher at a time per database
 * (advisory lock in the service).
 */
@Injectable()
export class ReconciliationWorker extends TickingWorker {
  constructor(
    @Inject(ORCHESTRATOR_CONFIG) config: OrchestratorConfig,
    private readonly reconciliation: ReconciliationService,
  ) {
    super({
      name: 'reconciliation worker',
      everyMs: config.reconciliation.tickMs,
      maxBackoffMs: 60_000,
      enabled: config.reconciliation.workerEnabled,
    });
  }

  protected async round(): Promise<void> {
    await this.reconciliation.startScheduledRun();
    await this.reconciliation.dispatch();
  }
}
