import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { ORCHESTRATOR_CONFIG, type OrchestratorConfig } from '../config';
import { SagaRuntime } from './saga-runtime';
import { WakeableSleep } from './wakeable-sleep';

/**
 * Fires due timers every TIMER_POLL_MS, up to TIMER_BATCH_SIZE per round, each in its own
 * transaction through SagaRuntime (claimed FOR UPDATE SKIP LOCKED, so any number of
 * workers can run against one database).
 */
@Injectable()
export class TimerWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(TimerWorker.name);
  private readonly signal = new WakeableSleep();
  private running: Promise<void> | undefined;
  private stopping = false;

  constructor(
    @Inject(ORCHESTRATOR_CONFIG) private readonly config: OrchestratorConfig,
    private readonly runtime: SagaRuntime,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.timers.workerEnabled) this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.stop();
  }

  start(): void {
    if (this.running) return;
    this.stopping = false;
    this.running = this.loop();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.signal.wake();
    await this.running;
    this.running = undefined;
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

  private async loop(): Promise<void> {
    while (!this.stopping) {
      let fired = 0;
      try {
        this.signal.consume();
        fired = await this.runOnce();
      } catch (error) {
        this.logger.warn(`timer worker: round failed: ${String(error)}`);
      }
      // A full batch means more may be due: go on at once.
      if (fired < this.config.timers.batchSize) await this.signal.sleep(this.config.timers.pollMs);
    }
  }
}
