import type { SimulatorControl } from '../../simulator/index.ts';

/**
 * The simulator's plots as the tests pick them, read once (edits made later do not move a plot from
 * one group to another): the ids of a supplier's own plots (no other supplier's), of the plots two
 * suppliers share, and of the business's own plots. `exceptOdd` leaves out the simulator's odd records
 * (docs/simulator.md), for a test that needs ordinary shapes.
 */
export function plotGroups(
  control: SimulatorControl,
  options: { exceptOdd?: boolean } = {},
): { onlyOf: (supplierId: string) => string[]; shared: string[]; own: string[] } {
  const odd = new Set<string | undefined>(options.exceptOdd ? Object.values(control.oddRecords()) : []);
  const all = [...control.plots()]
    .map((p) => ({ id: p.plot['id'] as string, suppliers: p.supplierIds }))
    .filter((p) => !odd.has(p.id));
  const ids = (keep: (suppliers: readonly string[]) => boolean) =>
    all.filter((p) => keep(p.suppliers)).map((p) => p.id);
  return {
    onlyOf: (supplierId) => ids((s) => s.length === 1 && s[0] === supplierId),
    shared: ids((s) => s.length === 2),
    own: ids((s) => s.length === 0),
  };
}
