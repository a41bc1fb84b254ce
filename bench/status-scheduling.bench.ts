/**
 * The status-query scheduler in simulated time (bench/support/status-scheduling.ts): the chaos
 * runs' population on one adapter's status budget (2/s, burst 2, urgent reserve 1; issue #38),
 * its waits, time to truth, admitted rate against the budget and the tokens lost while queries
 * were held. `SIM_STUCK` (150), `SIM_SALES_PER_SECOND` (0.5), `SIM_MINUTES` (10).
 */
import { chaosPopulation, describeRun, simulate } from './support/status-scheduling';

const num = (name: string, fallback: number): number => {
  const value = process.env[name];
  return value === undefined || value === '' ? fallback : Number(value);
};

const settings = {
  statusRatePerSecond: 2,
  statusBurst: 2,
  durationMs: num('SIM_MINUTES', 10) * 60_000,
  batchMs: 500,
};
const operations = chaosPopulation(
  num('SIM_STUCK', 150),
  num('SIM_SALES_PER_SECOND', 0.5),
  settings.durationMs,
);
const report = simulate(operations, settings);
console.log(
  `status budget 2/s burst 2 (urgent reserve 1), ${operations.length} operations, ${settings.durationMs / 60_000} min, timer poll 500 ms`,
);
for (const line of describeRun(report, settings)) console.log(`  ${line}`);
