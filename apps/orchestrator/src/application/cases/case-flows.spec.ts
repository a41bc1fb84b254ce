import { FLOW_FAMILIES } from '@payments/contracts';
import { CASE_FLOWS, FLOW_COMMANDS } from './case.service';

/**
 * The case service's table of flows (which command settles a decided operation, which refreshes)
 * is held to the flow registry: a family that declares a `…settle-by-decision` command is in it
 * with that command and its saga id field, and nothing else is — a new flow that moves money
 * cannot be left out of the cases silently.
 */
describe('the flows cases are opened for', () => {
  const settles = (family: (typeof FLOW_FAMILIES)[number]) =>
    (family.internalCommands as readonly string[]).find((c) => c.endsWith('settle-by-decision'));

  it('are exactly the families that declare a settle-by-decision command', () => {
    const declaring = FLOW_FAMILIES.filter((f) => settles(f) !== undefined).map((f) => f.name);
    expect([...CASE_FLOWS].sort()).toEqual([...declaring].sort());
  });

  it.each(FLOW_FAMILIES.filter((f) => settles(f) !== undefined).map((f) => [f.name, f] as const))(
    '%s: the settle command and saga id field are the family’s own',
    (name, family) => {
      expect(FLOW_COMMANDS[name]).toMatchObject({
        idField: family.sagaIdField,
        settle: settles(family),
      });
    },
  );
});
