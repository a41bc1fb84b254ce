import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { BackgroundLoop } from '@payments/core';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../../config';
import { CaseService } from './case.service';

/**
 * Every CASE_SWEEP_MS: opens the cases that are due (an operation alerted no trace or amount
 * mismatch, or alerted longer than CASE_AFTER_ALERT_HOURS), closes those whose operation the
 * gateway's evidence settled meanwhile, and reopens those whose saga says a gateway answer
 * contradicted the decision. Safe on every replica: a case's id derives from its
 * saga and request, and the table takes one per pair.
 */
@Injectable()
export class CaseWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(CaseWorker.name);
  private readonly loop: BackgroundLoop;

  constructor(
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
    private readonly cases: CaseService,
  ) {
    const { sweepMs } = config.cases;
    this.loop = new BackgroundLoop({
      runOnce: async () => {
        const { opened, closed, reopened } = await this.cases.sweep();
        if (opened + closed + reopened > 0)
          this.logger.log(
            `cases: ${opened} opened, ${reopened} reopened (a person must decide), ${closed} closed by the gateway's evidence`,
          );
        return 'idle';
      },
      idleMs: sweepMs,
      backoffMs: (failures) => Math.min(sweepMs * 2 ** failures, 60_000),
      onError: (error) => this.logger.warn(`case worker: round failed: ${String(error)}`),
    });
  }

  onApplicationBootstrap(): void {
    if (this.config.cases.workerEnabled) this.loop.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }
}
