import { ConcurrencyGauge } from '../domain/concurrency';
import { activeTraceparent } from '@payments/observability';
import { VirtualClock } from '../domain/clock';
import { SandboxEngine } from '../domain/engine';
import { FaultRegistry } from '../domain/faults';
import { Ledger } from '../domain/ledger';
import { MerchantRegistry } from '../domain/merchants';
import {
  CallbackDispatcher,
  CallbackSender,
  CallbackSettings,
  fetchSender,
} from './callback-dispatcher';
import { SandboxControls } from './controls';
import { ApiSettings, SandboxApi } from './sandbox-api';

export interface SandboxOptions {
  readonly api: ApiSettings;
  readonly callbacks: CallbackSettings;
  readonly settlementDelayMs: number;
  readonly payoutCheckTtlMs: number;
  readonly requireCustomerFields: boolean;
  readonly tickMs: number;
  readonly sender?: CallbackSender;
  readonly onError?: (message: string) => void;
}

/** The whole simulator as plain objects, so it runs with or without Nest. */
export class Sandbox {
  readonly clock = new VirtualClock();
  readonly ledger = new Ledger();
  readonly faults = new FaultRegistry();
  readonly dispatcher: CallbackDispatcher;
  readonly engine: SandboxEngine;
  readonly api: SandboxApi;
  readonly controls: SandboxControls;
  private ticker: NodeJS.Timeout | undefined;

  constructor(
    readonly merchants: MerchantRegistry,
    private readonly options: SandboxOptions,
  ) {
    this.dispatcher = new CallbackDispatcher(
      this.faults,
      options.callbacks,
      options.sender ?? fetchSender,
      options.onError,
    );
    this.engine = new SandboxEngine(
      merchants,
      this.clock,
      this.ledger,
      this.dispatcher,
      {
        settlementDelayMs: options.settlementDelayMs,
        payoutCheckTtlMs: options.payoutCheckTtlMs,
        methodTimeoutMs: 10_000,
        requireCustomerFields: options.requireCustomerFields,
      },
      activeTraceparent,
    );
    const concurrency = new ConcurrencyGauge();
    this.api = new SandboxApi(this.engine, merchants, this.faults, options.api, concurrency);
    this.controls = new SandboxControls(
      this.engine,
      this.ledger,
      this.faults,
      this.clock,
      this.dispatcher,
      concurrency,
    );
  }

  /** Background processing: finishes due operations and sends callbacks without a poll. */
  start(): void {
    if (this.ticker) return;
    this.ticker = setInterval(() => {
      try {
        this.engine.settle();
      } catch (error) {
        this.options.onError?.(`settle failed: ${(error as Error).message}`);
      }
    }, this.options.tickMs);
    this.ticker.unref();
  }

  stop(): void {
    if (this.ticker) clearInterval(this.ticker);
    this.ticker = undefined;
    this.dispatcher.stop();
  }
}
