import { describe, expect, it } from 'vitest';
import { largestFirst } from '../../../../domain/paging/supplier-order.ts';

describe('the order suppliers are read in', () => {
  it('largest first, unknown sizes before known ones, equal sizes in the service order', () => {
    const suppliers = [
      { id: 'a', expectedPages: 2 },
      { id: 'b', expectedPages: 40 },
      { id: 'c', expectedPages: null },
      { id: 'd', expectedPages: 2 },
      { id: 'e', expectedPages: 0 },
      { id: 'f', expectedPages: 40 },
      { id: 'g', expectedPages: null },
    ];
    expect(largestFirst(suppliers).map((s) => s.id)).toEqual(['c', 'g', 'b', 'f', 'a', 'd', 'e']);
    // The input is left as it was.
    expect(suppliers.map((s) => s.id).join('')).toBe('abcdefg');
  });

  it('no suppliers, none to read', () => {
    expect(largestFirst([])).toEqual([]);
  });
});
