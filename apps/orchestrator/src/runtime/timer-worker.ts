import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { BackgroundLoop } from '@payments/core';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../config';
import { SagaRuntime } from './saga-runtime';

/**
 * Fires due timers every TIMER_POLL_MS, up to TIMER_BATCH_SIZE per round, each in its own
 * transaction through the SagaRuntime (claimed FOR UPDATE SKIP LOCKED, so any number of
 * workers can run against one database). The loop itself is libs/core's BackgroundLoop.
 */
@Injectable()
export class TimerWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(TimerWorker.name);
  private readonly loop: BackgroundLoop;
  private stopping = false;

  constructor(
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
    private readonly runtime: SagaRuntime,
  ) {
    this.loop = new BackgroundLoop({
      // A full batch means more may be due: go on at once.
      runOnce: async () => ((await this.runOnce()) < config.timers.batchSize ? 'idle' : 'busy'),
      idleMs: config.timers.pollMs,
      backoffMs: () => config.timers.pollMs,
      onError: (error) => this.logger.warn(`timer worker: round failed: ${String(error)}`),
    });
  }

  onApplicationBootstrap(): void {
    if (this.config.timers.workerEnabled) this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  start(): void {
    this.stopping = false;
    this.loop.start();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.loop.stop();
  }

  /** Fires what is due now; returns how many timers this worker fired. */
  async runOnce(): Promise<number> {
    const { batchSize } = this.config.timers;
    let fired = 0;
    // Timers another worker took meanwhile do not count, but bound the round all the same.
    for (let tries = 0; fired < batchSize && tries < 2 * batchSize && !this.stopping; tries++) {
      const outcome = await this.runtime.fireNextDueTimer();
      if (outcome === 'idle') break;
      if (outcome === 'fired') fired += 1;
    }
    return fired;
  }
}
