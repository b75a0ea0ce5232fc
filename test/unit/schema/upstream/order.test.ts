import { describe, it, expect } from 'vitest';
import { oldestFirst, type CreatedRecord } from '../../../../schema/upstream/order.ts';

describe('the one of several records: the oldest createdAt, then the id', () => {
  const first = (records: CreatedRecord[]): string => [...records].sort(oldestFirst)[0]!.id;
  const cases: Array<[string, CreatedRecord[], string]> = [
    [
      'the older wins',
      [
        { id: 'a', createdAt: '2026-01-02T00:00:00Z' },
        { id: 'b', createdAt: '2026-01-01T00:00:00Z' },
      ],
      'b',
    ],
    [
      'the same time: the smaller id',
      [
        { id: 'b', createdAt: '2026-01-01T00:00:00Z' },
        { id: 'a', createdAt: '2026-01-01T00:00:00Z' },
      ],
      'a',
    ],
    [
      'time, not text: a fraction is later than the whole second',
      [
        { id: 'a', createdAt: '2026-01-01T00:00:00.500Z' },
        { id: 'b', createdAt: '2026-01-01T00:00:00Z' },
      ],
      'b',
    ],
    [
      'time, not text: offsets count',
      [
        { id: 'a', createdAt: '2026-01-01T00:30:00Z' },
        { id: 'b', createdAt: '2026-01-01T01:00:00+01:00' },
      ],
      'b',
    ],
    ['no createdAt counts as oldest', [{ id: 'b', createdAt: '2026-01-01T00:00:00Z' }, { id: 'z' }], 'z'],
    [
      'null and unreadable createdAt alike, then by id',
      [
        { id: 'y', createdAt: 'not a time' },
        { id: 'x', createdAt: null },
        { id: 'a', createdAt: '2020-01-01T00:00:00Z' },
      ],
      'x',
    ],
    ['ids in code-unit order, whatever the locale', [{ id: 'b' }, { id: 'B' }, { id: 'a' }], 'B'],
  ];
  it.each(cases)('%s', (_name, records, id) => {
    expect(first(records)).toBe(id);
    expect(first([...records].reverse())).toBe(id); // whatever order the service listed them in
  });

  it('is a consistent comparator', () => {
    const r: CreatedRecord = { id: 'a', createdAt: '2026-01-01T00:00:00Z' };
    expect(oldestFirst(r, { ...r })).toBe(0);
    expect(oldestFirst({ id: 'a' }, { id: 'b' })).toBe(-1);
    expect(oldestFirst({ id: 'b' }, { id: 'a' })).toBe(1);
  });
});
