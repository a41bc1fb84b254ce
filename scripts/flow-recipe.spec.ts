/**
 * ARCHITECTURE.md's recipe for a new flow, tested: a throw-away money-moving flow family
 * ("widget", with a new gateway operation `make-widget`) built here as a fixture, registered
 * complete, then with each step of the recipe left out. Every omission fails: the registry check
 * the orchestrator runs at startup (`registeredFlows`, so a unit test or the boot fails), or the
 * compiler — each `@ts-expect-error` below is a compile error `npm run typecheck` insists on: were
 * the table complete without the step, the directive itself would fail the type check.
 */
import { loadConfig } from '@payments/config';
import {
  byType,
  FLOW_FAMILIES,
  type FlowFamily,
  flowFamily,
  GATEWAY_OPERATION_TRAITS,
  type GatewayOperation,
  type GatewayRequest,
  Money,
  sagaCommands,
} from '@payments/contracts';
import { sagaEvents } from '@payments/contracts/operation-events';
import { OPERATION_TABLE } from '../apps/gateway-adapter/src/domain/operation-table';
import { plainRow } from '../apps/gateway-adapter/src/domain/operation-rows';
import { ROUTES } from '../apps/gateway-sandbox/src/domain/engine/routes';
import type { OperationName } from '../apps/gateway-sandbox/src/domain/operations';
import { orchestratorConfigShape } from '../apps/orchestrator/src/config';
import type { FlowModule } from '../apps/orchestrator/src/flows/flow-module';
import { FLOW_MODULES, registeredFlows } from '../apps/orchestrator/src/flows/registered-flows';
import { transferModule } from '../apps/orchestrator/src/flows/transfer/module';

const config = loadConfig('orchestrator', orchestratorConfigShape, {});

// ---- the fixture: step 3, its contracts module ----------------------------------------------

const widgetCommand = sagaCommands('widgetId');
const widgetEvent = sagaEvents('widgetId');
const WIDGET_FAMILY: FlowFamily = flowFamily({
  name: 'widget',
  sagaIdField: 'widgetId',
  commands: byType(
    widgetCommand('make-widget', { amount: Money }),
    widgetCommand('scrap-widget', {}),
  ),
  events: byType(widgetEvent('widget-made', { amount: Money }), widgetEvent('widget-scrapped', {})),
});

// ---- step 1, its folder: the flow (borrowed from the transfer, renamed) and its module ------

const widgetModule: FlowModule = {
  name: 'widget',
  family: WIDGET_FAMILY,
  flow: (c) => ({
    ...transferModule.flow(c),
    name: 'widget',
    commandTypes: ['make-widget', 'scrap-widget'],
  }),
  reconciliation: transferModule.reconciliation,
  moneyEvents: ['widget-made'],
};

/** Step 2 and step 3's registry line: one line in FLOW_MODULES, one in FLOW_FAMILIES. */
const MODULES = [...FLOW_MODULES, widgetModule];
const FAMILIES = [...FLOW_FAMILIES, WIDGET_FAMILY];

const withWidget = (change: Partial<FlowModule>) =>
  FLOW_MODULES.concat({ ...widgetModule, ...change });

describe("ARCHITECTURE.md's recipe for a new flow, each step left out", () => {
  it('the complete recipe registers: the widget flow is hosted beside the others', () => {
    const names = registeredFlows(config, MODULES, FAMILIES).map((flow) => flow.name);
    expect(names).toEqual([...FLOW_MODULES.map((m) => m.name), 'widget']);
  });

  it('step 2 left out (no line in FLOW_MODULES): its family has no flow, the boot fails', () => {
    expect(() => registeredFlows(config, FLOW_MODULES, FAMILIES)).toThrow(
      'family widget has no flow module; command type make-widget (widget) has no flow',
    );
  });

  it('step 3 left out (no line in FLOW_FAMILIES): the flow hosts a family nobody parses', () => {
    expect(() => registeredFlows(config, MODULES, FLOW_FAMILIES)).toThrow(
      'flow widget: its family widget is not in FLOW_FAMILIES',
    );
  });

  it("the binding leaves out one of its family's commands: that command has no flow", () => {
    const forgetful = withWidget({
      flow: (c) => ({ ...widgetModule.flow(c), commandTypes: ['make-widget'] }),
    });
    expect(() => registeredFlows(config, forgetful, FAMILIES)).toThrow(
      'command type scrap-widget (widget) has no flow',
    );
  });

  it('the module leaves out its reconciliation, or names a money event its family lacks', () => {
    expect(() =>
      registeredFlows(config, withWidget({ reconciliation: 'moves-no-money' }), FAMILIES),
    ).toThrow('flow widget: its events say money moved and it says moves-no-money');
    expect(() =>
      registeredFlows(config, withWidget({ moneyEvents: ['widget-sold'] }), FAMILIES),
    ).toThrow('flow widget: money event widget-sold is not an event of its family');
  });

  it('the compiler refuses each piece a new flow and a new gateway operation leave out', () => {
    type Widened = GatewayOperation | 'make-widget';
    type SameSet<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

    // Step 1: a module that does not name its contracts family.
    const { family: _family, ...withoutFamily } = widgetModule;
    // @ts-expect-error — `family` is missing
    const noFamily: FlowModule = withoutFamily;
    // Step 3: a command schema without the family's saga id field.
    flowFamily({
      name: 'widget',
      sagaIdField: 'widgetId',
      // @ts-expect-error — a command of the family without `widgetId`
      commands: byType(sagaCommands('gadgetId')('make-gadget', {})),
      events: {},
    });
    // Step 4, a new gateway operation: its traits row (money moved or not: reconciliation's
    // paid-twice lookup reads it),
    // @ts-expect-error — no `make-widget` row
    GATEWAY_OPERATION_TRAITS satisfies Record<Widened, { readonly movesMoney: boolean }>;
    // its request schema in the request union (the AsyncAPI document is built from that),
    // @ts-expect-error — no request of `make-widget`
    true satisfies SameSet<GatewayRequest['operation'], Widened>;
    // its row in the adapter's operation table (the file of its family),
    // @ts-expect-error — no `make-widget` row
    OPERATION_TABLE satisfies { readonly [O in Widened]: unknown };
    // which names a catalogue operation of the client (its family's file there; never run here),
    // @ts-expect-error — no `v2/make-widget` in the catalogue
    const widgetRow = () => plainRow('v2/make-widget', () => ({}));
    // and its handler in the sandbox's routes (its family's file there).
    // @ts-expect-error — no `MAKE_WIDGET` route
    ROUTES satisfies Record<OperationName | 'MAKE_WIDGET', unknown>;

    expect([noFamily.name, typeof widgetRow]).toEqual(['widget', 'function']);
  });
});
