import { Inject, Injectable } from '@nestjs/common';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../../config';
import { TickingWorker } from '../ticking-worker';
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
export class DayCloseWorker extends TickingWorker {
  constructor(
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
    private readonly days: DayCloseService,
    private readonly tieOut: DayTieOutService,
  ) {
    super({
      name: 'day close',
      everyMs: config.finance.dayCloseTickMs,
      maxBackoffMs: 600_000,
      enabled: true,
    });
  }

  override onApplicationBootstrap(): void {
    super.onApplicationBootstrap();
    if (!this.config.finance.dayCloseEnabled)
      this.logger.log(
        'DAY_CLOSE_ENABLED=false: no scheduled closes here; close reports still progress',
      );
  }

  protected async round(): Promise<void> {
    const closes = this.config.finance.dayCloseEnabled ? await this.days.closeDueDays() : [];
    for (const close of closes) {
      this.logger.log(
        `day ${close.event.day} of endpoint ${close.event.merchant.endpointId} closed (${close.event.timeZone}): ${close.event.count} money events, last merchantSeq ${close.event.lastMerchantSeq}`,
      );
      await this.tieOut.startFirst(close.event, close.closedBy);
    }
    await this.tieOut.progress();
  }
}
