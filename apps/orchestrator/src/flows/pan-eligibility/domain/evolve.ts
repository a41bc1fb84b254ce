import type { PanEligibilityEvent } from '@payments/contracts';
import { unhandled } from '../../../domain/decision';
import { decidedOf, reopenedOf } from '../../../domain/gateway-operation/decided-operation';
import {
  opened,
  requestedState,
  settledAt,
  withLifecycleEvent,
} from '../../../domain/gateway-operation/single-operation';
import type { CheckState } from './model';

/** The check's state after one of its events (pure, total over the event union). */
export function evolveCheck(state: CheckState, event: PanEligibilityEvent): CheckState {
  const version = event.version;
  switch (event.type) {
    case 'pan-eligibility-requested':
      return { ...requestedState('checking', event), checkId: event.checkId };
    case 'pan-eligibility-accepted-by-gateway':
    case 'pan-eligibility-outcome-unknown':
    case 'pan-eligibility-operation-resent':
      return withLifecycleEvent(opened(state, 'check'), event);
    case 'pan-eligibility-answered':
      return settledAt(
        opened(state, 'check'),
        event.eligible ? 'eligible' : 'not-eligible',
        version,
      );
    case 'pan-eligibility-failed':
      return settledAt(opened(state, 'check'), 'failed', version);
    case 'pan-eligibility-settled-by-decision': {
      // A decision of two people (a case): "not done" (the only one a check takes) as failed.
      const open = opened(state, 'check');
      if (open.inFlight === undefined) throw new Error(`${event.type} with nothing in flight`);
      return { ...settledAt(open, 'failed', version), decided: decidedOf(open.inFlight, event) };
    }
    case 'pan-eligibility-case-reopened':
      return reopenedOf({ ...opened(state, 'check'), version });
    case 'pan-eligibility-command-rejected':
      return { ...state, version: Math.max(state.version, version) };
    default:
      return unhandled(event, 'event');
  }
}
