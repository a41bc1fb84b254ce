import fc from 'fast-check';
import type { RebillCommand, ScheduleEvent } from '@payments/contracts';
import * as schedules from '../../../../test/kits/recurring-schedule.kit';
import { decideSchedule, type ScheduleInput } from './decide';
import { fold } from './evolve';
import { initialScheduleState, type ChargeTimer, type ScheduleState } from './state';

/**
 * One charge per cycle, whatever happens: timers fire late, twice or after they were replaced;
 * outcomes arrive once, twice or stale; the schedule is paused, resumed, updated, cancelled.
 * A simulated runtime keeps the one pending charge timer (set/cancel effects) and the rebill
 * sagas started (a start-saga with a command id already started is the same saga: idempotent).
 */
type Step =
  | { kind: 'fire-due' }
  | { kind: 'fire-again' }
  | { kind: 'fire-stale'; back: number }
  | { kind: 'outcome'; result: 'approved' | 'declined' | 'failed' }
  | { kind: 'outcome-again' }
  | { kind: 'pause' }
  | { kind: 'resume'; afterDays: number }
  | { kind: 'update'; minor: number }
  | { kind: 'cancel' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'fire-due' as const }) },
  { weight: 2, arbitrary: fc.constant({ kind: 'fire-again' as const }) },
  {
    weight: 1,
    arbitrary: schedules.stepOf('fire-stale', { back: fc.integer({ min: 1, max: 3 }) }),
  },
  {
    weight: 6,
    arbitrary: schedules.stepOf('outcome', {
      result: fc.constantFrom(
        'approved' as const,
        'approved' as const,
        'declined' as const,
        'failed' as const,
      ),
    }),
  },
  { weight: 2, arbitrary: fc.constant({ kind: 'outcome-again' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'pause' as const }) },
  {
    weight: 1,
    arbitrary: schedules.stepOf('resume', { afterDays: fc.integer({ min: 0, max: 120 }) }),
  },
  {
    weight: 1,
    arbitrary: schedules.stepOf('update', { minor: fc.integer({ min: 1, max: 10_000 }) }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: 'cancel' as const }) },
);

interface World {
  now: string;
  state: ScheduleState;
  events: ScheduleEvent[];
  pending: { at: string; timer: ChargeTimer } | null;
  lastFired: ChargeTimer | null;
  /** Rebill sagas started, by command id (the runtime starts a command id once). */
  started: Map<string, RebillCommand>;
  lastOutcome: ScheduleInput | null;
}

const later = (a: string, b: string) => (Date.parse(a) >= Date.parse(b) ? a : b);

function apply(world: World, input: ScheduleInput): void {
  const decision = decideSchedule(input, world.state, {
    now: world.now,
    policy: { retryDelaysMs: [86_400_000, 3 * 86_400_000] },
  });
  world.events.push(...decision.events);
  world.state = fold(world.state, decision.events);
  for (const effect of decision.effects) {
    switch (effect.type) {
      case 'set-charge-timer':
        world.pending = { at: effect.at, timer: effect.timer };
        break;
      case 'cancel-charge-timer':
        world.pending = null;
        break;
      case 'start-rebill':
        if (!world.started.has(effect.command.commandId))
          world.started.set(effect.command.commandId, effect.command);
        break;
      case 'send-gateway-request':
      case 'resend-registration':
      case 'set-status-timer':
      case 'cancel-status-timer':
      case 'advance-status-timer':
        throw new Error(`a schedule the orchestrator charges asked the gateway: ${effect.type}`);
      default: {
        const never: never = effect;
        throw new Error(String(never));
      }
    }
  }
}

function run(steps: readonly Step[]): World {
  const world: World = {
    now: schedules.T0,
    state: initialScheduleState,
    events: [],
    pending: null,
    lastFired: null,
    started: new Map(),
    lastOutcome: null,
  };
  apply(world, schedules.create());
  for (const step of steps) {
    switch (step.kind) {
      case 'fire-due':
        if (!world.pending) break;
        world.now = later(world.now, world.pending.at);
        world.lastFired = world.pending.timer;
        // The runtime deletes a timer when it fires it; the decision may set the next one.
        world.pending = null;
        apply(world, schedules.timer(world.lastFired.cycle, world.lastFired.attempt));
        break;
      case 'fire-again':
        if (world.lastFired)
          apply(world, schedules.timer(world.lastFired.cycle, world.lastFired.attempt));
        break;
      case 'fire-stale':
        if (world.lastFired)
          apply(world, schedules.timer(Math.max(0, world.lastFired.cycle - step.back), 1));
        break;
      case 'outcome': {
        const charge = 'charge' in world.state ? world.state.charge : null;
        if (!charge) break;
        const input = schedules.command({
          type: 'record-cycle-outcome',
          commandId: `00000000-0000-4000-8000-${world.events.length.toString(16).padStart(12, '0')}`,
          scheduleId: world.state.status === 'initial' ? '' : world.state.terms.scheduleId,
          merchant: { endpointId: '1234' },
          occurredAt: world.now,
          cycle: charge.cycle,
          attempt: charge.attempt,
          paymentId: charge.paymentId,
          outcome: step.result,
        });
        world.lastOutcome = input;
        apply(world, input);
        break;
      }
      case 'outcome-again':
        if (world.lastOutcome) apply(world, world.lastOutcome);
        break;
      case 'pause':
        apply(world, schedules.pause());
        break;
      case 'resume':
        world.now = new Date(Date.parse(world.now) + step.afterDays * 86_400_000).toISOString();
        apply(world, schedules.resume());
        break;
      case 'update':
        apply(world, schedules.update({ minor: step.minor, currency: 'EUR' }));
        break;
      case 'cancel':
        apply(world, schedules.cancel());
        break;
      default: {
        const never: never = step;
        throw new Error(String(never));
      }
    }
  }
  return world;
}

describe('recurring schedule: properties', () => {
  it('at most one approved charge per cycle, one rebill per cycle and attempt, one in flight', () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 80 }), (steps) => {
        const world = run(steps);
        const charged = world.events.filter((e) => e.type === 'cycle-charged');
        const cycles = charged.map((e) => e.cycle);
        // Each cycle charged once, in increasing order.
        expect(cycles).toEqual([...new Set(cycles)].sort((a, b) => a - b));
        // A rebill saga per (cycle, attempt), never two with different ids for the same pair.
        const pairs = [...world.started.values()].map(
          (c) => `${c.schedule?.cycle}/${c.schedule?.attempt}`,
        );
        expect(new Set(pairs).size).toBe(pairs.length);
        // Every requested charge started a rebill, and no rebill was started without one.
        const requested = world.events.filter((e) => e.type === 'cycle-charge-requested');
        expect(new Set(requested.map((e) => e.commandId))).toEqual(new Set(world.started.keys()));
        expect(requested).toHaveLength(world.started.size);
        // Never two charges in flight: each request is answered before the next one.
        let open = 0;
        for (const e of world.events) {
          if (e.type === 'cycle-charge-requested') open += 1;
          if (e.type === 'cycle-charged' || e.type === 'cycle-charge-declined') open -= 1;
          expect(open === 0 || open === 1).toBe(true);
        }
        // Versions continue without gaps.
        expect(world.events.map((e) => e.version)).toEqual(world.events.map((_, i) => i + 1));
      }),
      { numRuns: 300 },
    );
  });

  it('without pause or cancel, no cycle is skipped: charges approved at once pay 0, 1, 2, …', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.constantFrom<Step>(
            { kind: 'fire-due' },
            { kind: 'fire-again' },
            { kind: 'outcome', result: 'approved' },
            { kind: 'outcome-again' },
          ),
          { maxLength: 60 },
        ),
        (steps) => {
          const world = run(steps);
          const cycles = world.events.filter((e) => e.type === 'cycle-charged').map((e) => e.cycle);
          expect(cycles).toEqual(cycles.map((_, i) => i));
        },
      ),
      { numRuns: 200 },
    );
  });
});
