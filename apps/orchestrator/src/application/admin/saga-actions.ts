import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { ADMIN_ACTIONS, type AdminAction } from '@payments/contracts';
import {
  actionCommand,
  actionVerdict,
  type ActionVerdict,
  type FlowAnswer,
  unknownSinceIn,
} from '../../domain/admin/admin-actions';
import { type AdminPrincipal, allows } from '../../domain/admin/admin-tokens';
import { contractCommands } from '../../flows/command-catalogue';
import { FLOW_ACTIONS } from '../../flows/registered-flows';
import { FLOWS } from '../../runtime/saga-runtime';
import type { Flow, RoutedCommand } from '../../runtime/flow';

/** A saga as the admin API acts on it: its row's identity, state and unknown-since. */
export interface ActedSaga {
  readonly id: string;
  readonly flow: string;
  readonly endpointId: string;
  readonly state: unknown;
  readonly unknownSince: string | null;
}

export type PreparedAction =
  | { readonly ok: true; readonly command: Record<string, unknown> & { type: string } }
  | { readonly ok: false; readonly kind: 'not-applicable' | 'invalid'; readonly message: string }
  | {
      readonly ok: false;
      readonly kind: 'not-allowed';
      readonly code: string;
      readonly message: string;
    };

/**
 * Actions by state: the command an action becomes (domain/admin/admin-actions.ts), validated by
 * the contracts, then put to the saga's own flow — its decider, dry run on the saga's current
 * state (pure: the decision is looked at, never applied). What the flow would refuse is not
 * offered and not sent; the saga's consumer still decides the command that is sent (a state that
 * moved in between refuses it there, as any late command).
 */
@Injectable()
export class SagaActions {
  private readonly flows: ReadonlyMap<string, Flow>;

  constructor(@Inject(FLOWS) flows: readonly Flow[]) {
    this.flows = new Map(flows.map((flow) => [flow.name, flow]));
  }

  prepare(
    principal: AdminPrincipal,
    saga: ActedSaga,
    action: AdminAction,
    reason: string,
    commandId: string,
    now: Date,
  ): PreparedAction {
    const built = actionCommand(
      action,
      { id: saga.id, flow: saga.flow, endpointId: saga.endpointId },
      { actor: principal.name, role: principal.role, reason, commandId, now: now.toISOString() },
      FLOW_ACTIONS,
    );
    if (!built.ok) return { ok: false, kind: 'not-applicable', message: built.message };
    const parsed = contractCommands.parse(built.command);
    if (!parsed.ok) return { ok: false, kind: 'invalid', message: parsed.message };
    const verdict = this.verdict(saga, action, parsed.command, now);
    if (!verdict.allowed) return { ok: false, kind: 'not-allowed', ...verdict };
    return { ok: true, command: built.command };
  }

  /** The actions this principal may take on the saga now (none for a viewer). */
  offered(principal: AdminPrincipal, saga: ActedSaga, now: Date): AdminAction[] {
    if (!allows(principal.role, 'operator')) return [];
    return ADMIN_ACTIONS.filter(
      (action) => this.prepare(principal, saga, action, 'offered?', randomUUID(), now).ok,
    );
  }

  private verdict(
    saga: ActedSaga,
    action: AdminAction,
    command: RoutedCommand,
    now: Date,
  ): ActionVerdict {
    const flow = this.flows.get(saga.flow);
    let answer: FlowAnswer;
    if (flow === undefined) {
      answer = { outcome: 'ignored', reason: `no flow ${saga.flow}` };
    } else {
      try {
        const decision = flow.decide({ kind: 'command', command }, saga.state, {
          now: now.toISOString(),
          ids: { next: () => randomUUID() },
        });
        answer =
          decision.outcome === 'rejected'
            ? {
                outcome: 'rejected',
                code: decision.rejection.code,
                message: decision.rejection.message,
              }
            : decision.outcome === 'ignored'
              ? { outcome: 'ignored', reason: decision.reason }
              : { outcome: 'accepted' };
      } catch (error) {
        answer = { outcome: 'ignored', reason: (error as Error).message };
      }
    }
    const unknownSince = saga.unknownSince ?? unknownSinceIn(saga.state);
    return actionVerdict(action, { unknownSince }, answer);
  }
}
