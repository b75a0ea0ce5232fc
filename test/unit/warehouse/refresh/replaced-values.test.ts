import { describe, it, expect } from 'vitest';
import { toPlotRows } from '../../../../warehouse/refresh/plot-rows.ts';
import { mapPlots } from '../../../../warehouse/refresh/plot-page.ts';
import { mayHoldUnstorablePlot, plotFingerprint } from '../../../../warehouse/refresh/plot-fingerprint.ts';
import { toInvitationRows, toNetwork } from '../../../../warehouse/refresh/network-rows.ts';
import { normalisePlot } from '../../../../upstream/index.ts';
import { samplePlot } from '../../upstream/samples.ts';
import type { BusinessConnection, BusinessInvitation, Plot } from '../../../../schema/upstream.ts';

const plot = (overrides: Record<string, unknown> = {}): Plot => normalisePlot(samplePlot(1, overrides), 'test');

describe('values a plot carries that Postgres cannot hold', () => {
  it('reports each as replaced, with its path and the value as sent, and stores the row unchanged by the mapping', () => {
    const sent = plot({
      name: 'a\u0000b',
      species: [{ scientificName: 'ok', commonName: '\ud800' }],
      customData: { 'k\u0000': { list: ['fine', 'x\udc00'] } },
      unknownField: 'not kept\u0000',
    });
    const { rows, issues } = toPlotRows(sent, false);
    // The mapping hands the text on as sent: the encoders replace it, the same way for every writer.
    expect(rows.plot.name).toBe('a\u0000b');
    expect(issues.filter((i) => i.action === 'replaced').map((i) => [i.field, i.sent])).toEqual([
      ['name', '"a\\u0000b"'],
      ['customData["k\\u0000"]', '"k\\u0000"'],
      ['customData["k\\u0000"].list[1]', '"x\\udc00"'],
      ['species[0].commonName', '"\\ud800"'],
    ]);
    // On a page, as the run records them.
    const mapped = mapPlots([plot({ description: '\u0000' })], 4, false, 7);
    expect(mapped.issues).toEqual([
      expect.objectContaining({ location: 'page 4 #7', field: 'description', action: 'replaced', sent: '"\\u0000"' }),
    ]);
  });

  it("walks only the plots whose JSON text holds one of the escapes: the fingerprint's text is the gate", () => {
    const plain = plot({ name: 'Café 😀\t"x"' });
    plotFingerprint(plain, false);
    expect(mayHoldUnstorablePlot(plain)).toBe(false);
    // Text that only looks like the escape opens the gate; the walk finds nothing.
    const lookalike = plot({ name: '\\u0000 as text' });
    plotFingerprint(lookalike, false);
    expect(mayHoldUnstorablePlot(lookalike)).toBe(true);
    expect(toPlotRows(lookalike, false).issues).toEqual([]);
    const odd = plot({ name: 'x\u0000' });
    plotFingerprint(odd, false);
    expect(mayHoldUnstorablePlot(odd)).toBe(true);
    // A plot never fingerprinted is walked, to be sure.
    expect(mayHoldUnstorablePlot(plot())).toBe(true);
  });

  it('compares as sent: the fingerprint differs for a NUL and for U+FFFD, so a stored U+FFFD does not read as a change', () => {
    expect(plotFingerprint(plot({ name: 'x\u0000' }), false)).toBe(plotFingerprint(plot({ name: 'x\u0000' }), false));
    expect(plotFingerprint(plot({ name: 'x\u0000' }), false)).not.toBe(
      plotFingerprint(plot({ name: 'x\ufffd' }), false),
    );
  });
});

describe('values of the network that Postgres cannot hold', () => {
  it('reports businesses, connections and invitations, by path from the record', () => {
    const link: BusinessConnection = {
      id: 'c1',
      sourceBusiness: { id: 's1', name: 'Supplier\u0000' },
      targetBusiness: { id: 'me', name: 'Me', vat: '\ud800' },
      customData: { note: 'fine' },
    };
    const network = toNetwork([link], []);
    expect(network.issues.map((i) => [i.entity, i.recordId, i.field, i.action, i.sent])).toEqual([
      ['business_connections', 'c1', 'sourceBusiness.name', 'replaced', '"Supplier\\u0000"'],
      ['business_connections', 'c1', 'targetBusiness.vat', 'replaced', '"\\ud800"'],
    ]);
    const invitation = { id: 'i1', status: 'PENDING', email: 'a\u0000@b.c', customData: {} } as BusinessInvitation;
    expect(toInvitationRows([invitation]).issues).toEqual([
      expect.objectContaining({ entity: 'business_invitations', field: 'email', action: 'replaced', location: '#0' }),
    ]);
  });
});
