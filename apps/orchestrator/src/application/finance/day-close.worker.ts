import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { BackgroundLoop } from '@payments/core';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../../config';
import { DayCloseService } from './day-close.service';

/**
 * Closes merchants' days every DAY_CLOSE_TICK_MS once they ended DAY_CLOSE_GRACE_SECONDS ago (in
 * each merchant's zone). Safe on every replica: a day closes once (`day_closes` key).
 */
@Injectable()
export class DayCloseWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DayCloseWorker.name);
  private readonly loop: BackgroundLoop;

  constructor(
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
    private readonly days: DayCloseService,
  ) {
    const tickMs = config.finance.dayCloseTickMs;
    this.loop = new BackgroundLoop({
      runOnce: async () => {
        for (const close of await this.days.closeDueDays())
          this.logger.log(
            `day ${close.event.day} of endpoint ${close.event.merchant.endpointId} closed (${close.event.timeZone}): ${close.event.count} money events, last merchantSeq ${close.event.lastMerchantSeq}`,
          );
        return 'idle';
      },
      idleMs: tickMs,
      backoffMs: (failures) => Math.min(tickMs * 2 ** failures, 600_000),
      onError: (error) => this.logger.warn(`day close: round failed: ${String(error)}`),
    });
  }

  onApplicationBootstrap(): void {
    if (this.config.finance.dayCloseEnabled) this.loop.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }
}
