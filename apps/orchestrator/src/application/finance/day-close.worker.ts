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
import { DayTieOutService } from './day-tie-out.service';

/**
 * Every DAY_CLOSE_TICK_MS: with DAY_CLOSE_ENABLED, closes merchants' days once they ended
 * DAY_CLOSE_GRACE_SECONDS ago (in each merchant's zone) and starts their close reports; always,
 * writes the close reports whose reconciliation run completed and starts the next version of a
 * report one of whose exceptions was settled since (day-tie-out.service.ts). Safe on every
 * replica: a day closes once (`day_closes` key), a report version is written once.
 */
@Injectable()
export class DayCloseWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DayCloseWorker.name);
  private readonly loop: BackgroundLoop;

  constructor(
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
    private readonly days: DayCloseService,
    private readonly tieOut: DayTieOutService,
  ) {
    const tickMs = config.finance.dayCloseTickMs;
    this.loop = new BackgroundLoop({
      runOnce: async () => {
        const closes = config.finance.dayCloseEnabled ? await this.days.closeDueDays() : [];
        for (const close of closes) {
          this.logger.log(
            `day ${close.event.day} of endpoint ${close.event.merchant.endpointId} closed (${close.event.timeZone}): ${close.event.count} money events, last merchantSeq ${close.event.lastMerchantSeq}`,
          );
          await this.tieOut.startFirst(close.event, close.closedBy);
        }
        await this.tieOut.progress();
        return 'idle';
      },
      idleMs: tickMs,
      backoffMs: (failures) => Math.min(tickMs * 2 ** failures, 600_000),
      onError: (error) => this.logger.warn(`day close: round failed: ${String(error)}`),
    });
  }

  onApplicationBootstrap(): void {
    this.loop.start();
    if (!this.config.finance.dayCloseEnabled)
      this.logger.log(
        'DAY_CLOSE_ENABLED=false: no scheduled closes here; close reports still progress',
      );
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }
}
