import { describe, it, expect } from 'vitest';
import { geometryDuplicateFindings, namedPlots } from '../../../../domain/eudr/geometry-duplicates.ts';

describe('geometry duplicate findings', () => {
  it('names at most five other plots, then counts the rest', () => {
    expect(namedPlots(['a'])).toBe('a');
    expect(namedPlots(['a', 'b'])).toBe('a and b');
    expect(namedPlots(['a', 'b', 'c', 'd', 'e'])).toBe('a, b, c, d and e');
    expect(namedPlots(['a', 'b', 'c', 'd', 'e', 'f', 'g'])).toBe('a, b, c, d, e and 2 more');
  });

  it('gives every plot of a group one warning naming the others, in id order, the same for the same groups', () => {
    const found = geometryDuplicateFindings([['p3', 'p1'], ['solo'], ['p2', 'p2']]);
    expect(found.map((f) => [f.plot_id, f.code, f.severity])).toEqual([
      ['p1', 'geometry_duplicate', 'warning'],
      ['p3', 'geometry_duplicate', 'warning'],
    ]);
    expect(found[0]!.message).toMatch(/^The same geometry as plot p3, /);
    expect(JSON.parse(found[1]!.details)).toMatchObject({ other_plots: 1, plot_ids: ['p1'] });
    expect(geometryDuplicateFindings([['p1', 'p3']])).toEqual(found);
  });

  it('bounds the sentence and the details of a large group, and counts them all', () => {
    const ids = Array.from({ length: 30 }, (_, i) => `p${String(i).padStart(2, '0')}`);
    const first = geometryDuplicateFindings([ids])[0]!;
    expect(first.message).toContain('as 29 other plots (p01, p02, p03, p04, p05 and 24 more)');
    const details = JSON.parse(first.details) as { other_plots: number; plot_ids: string[] };
    expect(details.other_plots).toBe(29);
    expect(details.plot_ids).toHaveLength(20);
  });
});
