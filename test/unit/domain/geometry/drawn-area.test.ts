import { describe, it, expect } from 'vitest';
import turfArea from '@turf/area';
import { drawnRingAreaM2 } from '../../../../domain/geometry/drawn-area.ts';
import { assessGeometry } from '../../../../domain/geometry/geometry-quality.ts';
import { bowTie } from '../../../../simulator/geometry.ts';
import type { Position } from '../../../../schema/upstream.ts';

// Shapes drawn on a grid of 0.001° near Abidjan, where a plot might be.
const at = (points: number[][]): Position[] => points.map(([x, y]) => [-4 + x! * 0.001, 5.3 + y! * 0.001]);
const closed = (points: number[][]): Position[] => at([...points, points[0]!]);
const turf = (...rings: Position[][]) => turfArea({ type: 'Polygon', coordinates: rings });

describe('the area a ring encloses as drawn', () => {
  it('is exactly @turf/area for a ring that does not cross itself, whichever way it turns', () => {
    const ring = closed([
      [0, 0],
      [4, 0],
      [4, 3],
      [2, 5],
      [0, 3],
    ]);
    const reversed = [...ring].reverse();
    expect(drawnRingAreaM2(ring)).toBe(turf(ring));
    expect(drawnRingAreaM2(reversed)).toBe(turf(reversed));
  });

  it('adds up both lobes of a bow-tie, which @turf/area cancels out to 0', () => {
    const bowtie = closed([
      [0, 0],
      [4, 4],
      [4, 0],
      [0, 4],
    ]);
    expect(turf(bowtie)).toBeLessThan(1);
    const lobes =
      turf(
        closed([
          [2, 2],
          [4, 4],
          [4, 0],
        ]),
      ) +
      turf(
        closed([
          [2, 2],
          [0, 4],
          [0, 0],
        ]),
      );
    expect(drawnRingAreaM2(bowtie)).toBeCloseTo(lobes, 3);
    expect(lobes).toBeGreaterThan(
      0.49 *
        turf(
          closed([
            [0, 0],
            [4, 0],
            [4, 4],
            [0, 4],
          ]),
        ),
    );
  });

  it('counts a region the ring goes round twice once (a curl inside the plot)', () => {
    // Round the square, then a small loop turning the same way, crossing the path at (1, 2).
    const curl = closed([
      [0, 0],
      [4, 0],
      [4, 4],
      [0, 4],
      [0, 2],
      [2, 2],
      [2, 3],
      [1, 3],
      [1, 1],
    ]);
    const outline = closed([
      [0, 0],
      [4, 0],
      [4, 4],
      [0, 4],
      [0, 2],
      [1, 2],
      [1, 1],
    ]);
    expect(drawnRingAreaM2(curl)).toBeCloseTo(turf(outline), 3);
  });

  it('leaves out a loop drawn backwards inside the plot (the ring winds round it zero times)', () => {
    // Round the square, then a figure of eight inside it: one lobe turns the same way (counted once), one backwards.
    const ring = closed([
      [0, 0],
      [4, 0],
      [4, 4],
      [0, 4],
      [1, 1],
      [3, 3],
      [3, 1],
      [1, 3],
      [1, 1],
    ]);
    const outline = closed([
      [0, 0],
      [4, 0],
      [4, 4],
      [0, 4],
      [1, 1],
    ]);
    const backwards = closed([
      [2, 2],
      [3, 3],
      [3, 1],
    ]);
    expect(drawnRingAreaM2(ring)).toBeCloseTo(turf(outline) - turf(backwards), 3);
  });

  it('splits a ring that touches itself at a vertex into its two parts', () => {
    const touching = closed([
      [0, 0],
      [2, 0],
      [2, 2],
      [4, 2],
      [4, 4],
      [2, 4],
      [2, 2],
      [0, 2],
    ]);
    const squares =
      turf(
        closed([
          [0, 0],
          [2, 0],
          [2, 2],
          [0, 2],
        ]),
      ) * 2;
    expect(drawnRingAreaM2(touching)).toBeCloseTo(squares, 0);
  });

  it('is 0 for a ring of fewer than three distinct positions', () => {
    expect(
      drawnRingAreaM2(
        at([
          [0, 0],
          [1, 0],
          [0, 0],
        ]),
      ),
    ).toBe(0);
    expect(drawnRingAreaM2([])).toBe(0);
  });

  it('measures no ring past its bounds (null), so one flagged plot cannot hold a page for hours', () => {
    // A zigzag of 200 positions crosses itself thousands of times; a ring of 10,001 positions is too long.
    const zigzag = Array.from({ length: 200 }, (_, i) => [-47 + (i % 2) * 0.01, -15 + ((i * 7919) % 200) * 1e-5]);
    expect(drawnRingAreaM2([...zigzag, zigzag[0]!])).toBeNull();
    // The plot is flagged with no area rather than a wrong one, and says why.
    const flagged = assessGeometry({ type: 'Polygon', coordinates: [[...zigzag, zigzag[0]!]] } as never);
    expect(flagged).toMatchObject({ valid: false, areaHa: null });
    expect(flagged.issue).toContain('area not measured');
    const long = Array.from({ length: 10_001 }, (_, i) => {
      const t = (i / 10_001) * 2 * Math.PI;
      return [-47 + 0.01 * Math.cos(t), -15 + 0.01 * Math.sin(t)];
    });
    expect(drawnRingAreaM2([...long, long[0]!])).toBeNull();
    // Just inside both bounds it is still measured.
    expect(drawnRingAreaM2([...long.slice(0, 10_000), long[0]!])).toBeGreaterThan(0);
  });
});

describe('a flagged shape keeps its area', () => {
  it('a self-intersecting plot is flagged and keeps the hectares its lobes cover', () => {
    // The simulator's odd bow-tie: two triangles covering half of a square of 10 ha.
    const facts = assessGeometry(bowTie(-3.53, 5.85, 100_000));
    expect(facts.valid).toBe(false);
    expect(facts.issue).toMatch(/^self-intersection at \[-3\.53, 5\.85\]/);
    expect(facts.areaHa).toBeGreaterThan(4.99);
    expect(facts.areaHa).toBeLessThan(5.01);
  });

  it('a valid polygon keeps exactly the area @turf/area gives it', () => {
    const geometry = {
      type: 'Polygon' as const,
      coordinates: [
        closed([
          [0, 0],
          [4, 0],
          [4, 4],
          [0, 4],
        ]),
        closed([
          [1, 1],
          [1, 2],
          [2, 2],
          [2, 1],
        ]),
      ],
    };
    expect(assessGeometry(geometry)).toMatchObject({ valid: true, areaHa: turfArea(geometry) / 10_000 });
  });

  it('a MultiPolygon with one crossing ring: outer minus holes per polygon, polygons added', () => {
    const square = closed([
      [10, 0],
      [14, 0],
      [14, 4],
      [10, 4],
    ]);
    const hole = closed([
      [11, 1],
      [11, 2],
      [12, 2],
      [12, 1],
    ]);
    const bowtie = closed([
      [0, 0],
      [4, 4],
      [4, 0],
      [0, 4],
    ]);
    const facts = assessGeometry({ type: 'MultiPolygon', coordinates: [[bowtie], [square, hole]] });
    expect(facts.valid).toBe(false);
    expect(facts.areaHa! * 10_000).toBeCloseTo(drawnRingAreaM2(bowtie)! + turf(square, hole), 3);
  });

  it('a ring that is not closed is measured as drawn, closed by its last edge', () => {
    const open = at([
      [0, 0],
      [4, 0],
      [4, 4],
      [0, 4],
    ]);
    const facts = assessGeometry({ type: 'Polygon', coordinates: [open] });
    expect(facts.issue).toBe('ring 0 is not closed (first and last positions differ)');
    expect(facts.areaHa! * 10_000).toBeCloseTo(
      turf(
        closed([
          [0, 0],
          [4, 0],
          [4, 4],
          [0, 4],
        ]),
      ),
      3,
    );
  });
});
