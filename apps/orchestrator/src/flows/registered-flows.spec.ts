import { loadConfig } from '@payments/config';
import {
  byType,
  commandTypesOf,
  FLOW_FAMILIES,
  flowFamily,
  type FlowFamily,
  PAN_ELIGIBILITY_FAMILY,
  sagaCommands,
  TRANSFER_FAMILY,
} from '@payments/contracts';
import { orchestratorConfigShape } from '../config';
import type { FlowModule } from './flow-module';
import { FLOW_MODULES, registeredFlows, registryProblems } from './registered-flows';

const config = loadConfig('orchestrator', orchestratorConfigShape, {});

/** The registry's problems with `modules` hosted (their flows' command types as declared). */
function problemsOf(modules: readonly FlowModule[]): string[] {
  return registryProblems(
    FLOW_FAMILIES,
    modules.map((m) => ({ ...m, commandTypes: m.flow(config).commandTypes })),
  );
}

describe('the flow registry', () => {
  it('hosts each flow once, under its module name', () => {
    const names = registeredFlows(config).map((flow) => flow.name);
    expect(names).toEqual(FLOW_MODULES.map((module) => module.name));
    expect(new Set(names).size).toBe(names.length);
  });

  it('hands the runtime each flow with the money events of its module', () => {
    for (const flow of registeredFlows(config)) {
      const module = FLOW_MODULES.find((m) => m.name === flow.name);
      expect({ flow: flow.name, money: flow.moneyEvents }).toEqual({
        flow: flow.name,
        money: module?.moneyEvents,
      });
    }
  });

  it("reconciles every flow whose events say money moved; names only its family's events", () => {
    expect(problemsOf(FLOW_MODULES)).toEqual([]);
  });

  it('refuses a money-moving flow module that says it moves no money', () => {
    const careless = FLOW_MODULES.map((m): FlowModule =>
      m.family === TRANSFER_FAMILY ? { ...m, reconciliation: 'moves-no-money' } : m,
    );
    expect(problemsOf(careless)).toEqual([
      'flow transfer: its events say money moved and it says moves-no-money',
    ]);
    expect(() => registeredFlows(config, careless)).toThrow('moves-no-money');
  });

  it("refuses a money event its flow's family does not write", () => {
    // The events each flow writes are its family's (FLOW_FAMILIES), never a list of the test's own.
    const stray = FLOW_MODULES.map((m): FlowModule =>
      m.family === TRANSFER_FAMILY ? { ...m, moneyEvents: ['paid-out'] } : m,
    );
    expect(problemsOf(stray)).toEqual([
      'flow transfer: money event paid-out is not an event of its family',
    ]);
  });

  it('gives every command type of every family exactly one flow, of its own family', () => {
    const hosted = registeredFlows(config).map((flow) => ({
      ...FLOW_MODULES.find((m) => m.name === flow.name)!,
      commandTypes: flow.commandTypes,
    }));
    expect(registryProblems(FLOW_FAMILIES, hosted)).toEqual([]);
    const owned = hosted.flatMap((h) => h.commandTypes).sort();
    expect(owned).toEqual(
      (FLOW_FAMILIES as readonly FlowFamily[]).flatMap((f) => commandTypesOf(f)).sort(),
    );
    // Each module is its family's, and the family is the one its flow's name says.
    for (const h of hosted) expect(h.family.name).toBe(h.name);
  });

  it('refuses to start with a family that has no flow module, naming its command types', () => {
    const orphanFamily: FlowFamily = flowFamily({
      name: 'orphan',
      sagaIdField: 'orphanId',
      commands: byType(sagaCommands('orphanId')('adopt-orphan', {})),
      events: {},
    });
    expect(() => registeredFlows(config, FLOW_MODULES, [...FLOW_FAMILIES, orphanFamily])).toThrow(
      /family orphan has no flow module; command type adopt-orphan \(orphan\) has no flow/,
    );
  });

  it('refuses to start with a flow module left out, or a flow missing one of its types', () => {
    const withoutPan = FLOW_MODULES.filter((m) => m.family !== PAN_ELIGIBILITY_FAMILY);
    expect(() => registeredFlows(config, withoutPan)).toThrow(
      'command type pan-eligibility (pan-eligibility) has no flow',
    );
    const forgetful = FLOW_MODULES.map((m): FlowModule =>
      m.family === TRANSFER_FAMILY
        ? {
            ...m,
            flow: (c) => {
              const flow = m.flow(c);
              return { ...flow, commandTypes: flow.commandTypes.slice(1) };
            },
          }
        : m,
    );
    expect(() => registeredFlows(config, forgetful)).toThrow(
      `command type ${commandTypesOf(TRANSFER_FAMILY)[0]} (transfer) has no flow`,
    );
  });

  it('refuses a type owned twice, and one a flow takes from another family', () => {
    const transfer = FLOW_MODULES.find((m) => m.family === TRANSFER_FAMILY)!;
    const pan = FLOW_MODULES.find((m) => m.family === PAN_ELIGIBILITY_FAMILY)!;
    const problems = registryProblems(FLOW_FAMILIES, [
      ...FLOW_MODULES.map((m) => ({
        ...m,
        commandTypes:
          m === transfer
            ? [...commandTypesOf(m.family), 'pan-eligibility']
            : commandTypesOf(m.family),
      })),
    ]);
    expect(problems).toEqual([
      `flow ${transfer.name} owns pan-eligibility, not a command of its family`,
      `command type pan-eligibility has two flows: ${transfer.name}, ${pan.name}`,
    ]);
  });
});
