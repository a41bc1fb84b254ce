import type { FlowDecision } from '../domain/decision';
import type { Decision, RuntimeEffect } from '../runtime/flow';

/**
 * A flow decider's decision in the runtime's vocabulary: its effects mapped by `effect`; a refused
 * command has none. For the flows bound by hand (the budget, the schedule); gateway flows go
 * through `runtime/flow-binding.ts`, which does the same.
 */
export function inRuntimeTerms<Event, Effect>(
  decision: FlowDecision<Event, Effect, string>,
  effect: (effect: Effect) => RuntimeEffect,
): Decision<Event, RuntimeEffect> {
  switch (decision.outcome) {
    case 'accepted':
      return { ...decision, effects: decision.effects.map(effect) };
    case 'ignored':
      return { ...decision, effects: decision.effects.map(effect) };
    case 'rejected':
      return decision;
  }
}
