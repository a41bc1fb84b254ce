import { Inject, Injectable } from '@nestjs/common';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../../config';
import { TickingWorker } from '../ticking-worker';
import { CaseService } from './case.service';

/**
 * Every CASE_SWEEP_MS: opens the cases that are due (an operation alerted no trace or amount
 * mismatch, or alerted longer than CASE_AFTER_ALERT_HOURS), closes those whose operation the
 * gateway's evidence settled meanwhile, and reopens those whose saga says a gateway answer
 * contradicted the decision. Safe on every replica: a case's id derives from its
 * saga and request, and the table takes one per pair.
 */
@Injectable()
export class CaseWorker extends TickingWorker {
  constructor(
    @Inject(ORCHESTRATOR_CONFIG) config: OrchestratorConfig,
    private readonly cases: CaseService,
  ) {
    super({
      name: 'case worker',
      everyMs: config.cases.sweepMs,
      maxBackoffMs: 60_000,
      enabled: config.cases.workerEnabled,
    });
  }

  protected async round(): Promise<void> {
    const { opened, closed, reopened } = await this.cases.sweep();
    if (opened + closed + reopened > 0)
      this.logger.log(
        `cases: ${opened} opened, ${reopened} reopened (a person must decide), ${closed} closed by the gateway's evidence`,
      );
  }
}
