import {
  type BeforeApplicationShutdown,
  Logger,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { BackgroundLoop } from '@payments/core';

/**
 * A background worker of the orchestrator that runs one round every tick while the app runs
 * (cases, day close, reconciliation): started at bootstrap when `enabled`, stopped before
 * shutdown; a failed round is logged and the next waits twice as long, up to `maxBackoffMs`.
 * Each round is safe on every replica (the subclass says why).
 */
export abstract class TickingWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  protected readonly logger: Logger;
  private readonly loop: BackgroundLoop;
  private readonly enabled: boolean;

  protected constructor(options: {
    readonly name: string;
    readonly everyMs: number;
    readonly maxBackoffMs: number;
    readonly enabled: boolean;
  }) {
    this.logger = new Logger(options.name);
    this.enabled = options.enabled;
    this.loop = BackgroundLoop.ticking({
      everyMs: options.everyMs,
      maxBackoffMs: options.maxBackoffMs,
      round: () => this.round(),
      onError: (error) => this.logger.warn(`${options.name}: round failed: ${String(error)}`),
    });
  }

  /** One round of the worker's work. */
  protected abstract round(): Promise<void>;

  onApplicationBootstrap(): void {
    if (this.enabled) this.loop.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.loop.stop();
  }
}
