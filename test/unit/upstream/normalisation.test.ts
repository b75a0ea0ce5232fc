import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  BusinessInvitationSchema,
  PlotSchema,
  TransactionSchema,
  UserSchema,
  WebhookSchema,
  type Plot,
} from '../../../schema/upstream.ts';
import { normalisePlot, normalisePlots } from '../../../upstream/plot-validator.ts';
import { parseResponse } from '../../../upstream/validate.ts';
import { ResponseValidationError } from '../../../upstream/errors.ts';
import { samplePlot, samplePage } from './samples.ts';

const E = 'GET /businesses/{businessId}/plots';

function failure(fn: () => unknown): ResponseValidationError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(ResponseValidationError);
    return e as ResponseValidationError;
  }
  throw new Error('expected a ResponseValidationError');
}

describe('normalisation at the boundary', () => {
  it('turns {} for unset values into null and text flags into booleans', () => {
    const plot = normalisePlot(samplePlot(0, { productionDateStart: {}, filename: {}, mostRecentAnalysis: {} }), E);
    expect(plot.productionDateStart).toBeNull();
    expect(plot.filename).toBeNull();
    expect(plot.mostRecentAnalysis).toBeNull();
    expect(plot.suppliers?.[0]?.newlyCreated).toBe(false);
    expect(plot.suppliers?.[0]?.contactPerson).toBeNull();

    const inv = parseResponse(
      BusinessInvitationSchema,
      { id: 'i', sourceIsInvitee: 'true', business: { id: 'b', contactPerson: {}, newlyCreated: 'true' } },
      'X',
    );
    expect(inv.sourceIsInvitee).toBe(true);
    expect(inv.business?.newlyCreated).toBe(true);
    expect(inv.business?.contactPerson).toBeNull();
    expect(parseResponse(UserSchema, { completed: 'false' }, 'X').completed).toBe(false);
    expect(
      parseResponse(
        WebhookSchema,
        { id: 'w', url: 'https://a.example', description: {}, isActive: true, events: [] },
        'X',
      ).description,
    ).toBeNull();
    expect(
      parseResponse(TransactionSchema, { id: 't', status: 'DRAFT', referenceNumber: {} }, 'X').referenceNumber,
    ).toBeNull();
  });

  it('keeps unknown fields and lets unknown value-set strings pass', () => {
    const plot = normalisePlot(
      samplePlot(0, {
        brandNewField: { x: 1 },
        riskLevel: 'catastrophic',
        riskAssessmentStatus: 'ESCALATED',
        commodities: ['vanilla'],
      }),
      E,
    );
    expect((plot as Plot & { brandNewField: unknown }).brandNewField).toEqual({ x: 1 });
    expect(plot.riskLevel).toBe('catastrophic');
    expect(plot.riskAssessmentStatus).toBe('ESCALATED');
    expect(plot.mostRecentAnalysis?.type).toBe('EUFOROBS');
    const tx = parseResponse(TransactionSchema, { id: 't', status: 'QUARANTINED', extra: 1 }, 'X');
    expect(tx.status).toBe('QUARANTINED');
    expect((tx as unknown as { extra: number }).extra).toBe(1);
  });

  it('returns customData unchanged, server namespaces included (rule 7)', () => {
    const plot = normalisePlot(samplePlot(0, { customData: { _server: { nested: true }, mine: 'x' } }), E);
    expect(plot.customData).toEqual({ _server: { nested: true }, mine: 'x' });
  });

  it('keeps surfaceArea in square metres', () => {
    expect(normalisePlot(samplePlot(0, { surfaceArea: 12_345.6 }), E).surfaceArea).toBe(12_345.6);
  });

  it('names the endpoint, the field path and the rule when a plot does not match', () => {
    const page = samplePage(20);
    (page[12] as { geometry: { coordinates: unknown } }).geometry.coordinates = { not: 'an array' };
    const err = failure(() => normalisePlots(page, E));
    expect(err.message).toBe('GET /businesses/{businessId}/plots: [12].geometry.coordinates: expected array');
    expect(err.retryable).toBe(false);

    expect(failure(() => normalisePlots([samplePlot(0, { id: 7 })], E)).message).toMatch(
      /: \[0\]\.id: expected string$/,
    );
    expect(failure(() => normalisePlots([samplePlot(0, { surfaceArea: '12' })], E)).message).toMatch(
      /\[0\]\.surfaceArea: expected number/,
    );
    const bad = samplePlot(0);
    (bad as { geometry: { coordinates: unknown[][] } }).geometry.coordinates[0]![3] = [1, 'x'];
    expect(failure(() => normalisePlots([bad], E)).message).toMatch(
      /: \[0\]\.geometry\.coordinates\[0\]\[3\]\[1\]: expected number$/,
    );
    expect(failure(() => normalisePlots({ data: [] }, E)).message).toBe(`${E}: expected array`);
    expect(failure(() => normalisePlots([samplePlot(0, { suppliers: [{ name: 'no id' }] })], E)).message).toMatch(
      /\[0\]\.suppliers\[0\]\.id: required string, missing/,
    );
  });

  it('names the field path for zod-validated resources too', () => {
    const err = failure(() =>
      parseResponse(z.array(WebhookSchema), [{ id: 'w', url: 'u', isActive: 'yes' }], 'GET /webhooks'),
    );
    expect(err.message).toBe('GET /webhooks: [0].isActive: expected boolean');
    expect(failure(() => parseResponse(TransactionSchema, { status: 'DRAFT' }, 'GET /transactions/{id}')).message).toBe(
      'GET /transactions/{id}: id: required string, missing',
    );
  });

  it('the focused plot validator agrees with PlotSchema (zod) on valid and invalid plots', () => {
    const cases: unknown[] = [
      samplePlot(1),
      samplePlot(2, { geometry: {} }),
      samplePlot(3, { mostRecentAnalysesByType: { PRECISION: {}, EUFOROBS: samplePlot(0).mostRecentAnalysis } }),
      samplePlot(4, { riskLevel: null }),
      samplePlot(5, { suppliers: [{ id: 's', members: [{ completed: 'true' }] }] }),
      samplePlot(6, { commodities: 'cocoa' }),
      samplePlot(7, { species: [{ commonName: 3 }] }),
      samplePlot(8, { geometry: { type: 'Point', coordinates: [1, 2] } }),
      samplePlot(9, {
        geometry: {
          type: 'LineString',
          coordinates: [
            [1, 2],
            [3, 4],
          ],
        },
      }),
      samplePlot(10, {
        geometry: {
          type: 'MultiLineString',
          coordinates: [
            [
              [1, 2],
              [3, 4],
            ],
          ],
        },
      }),
      samplePlot(11, {
        geometry: { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: [1, 2] }] },
      }),
      samplePlot(12, { geometry: { type: 'GeometryCollection', geometries: [{ type: 'Point', coordinates: 'x' }] } }),
      samplePlot(13, { geometry: { type: 'Circle', coordinates: [1, 2] } }),
      samplePlot(14, { geometry: { type: 'LineString', coordinates: [1, 2] } }),
    ];
    for (const c of cases) {
      const viaZod = PlotSchema.safeParse(structuredClone(c));
      let focused: unknown;
      let focusedOk = true;
      try {
        focused = normalisePlot(structuredClone(c), E);
      } catch {
        focusedOk = false;
      }
      expect(focusedOk).toBe(viaZod.success);
      if (viaZod.success) expect(focused).toEqual(viaZod.data);
    }
  });
});
