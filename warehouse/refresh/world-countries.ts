import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import countries from 'i18n-iso-countries';
import { compileCountryShapes, type CountryShapes } from '../../domain/eudr/country-shapes.ts';
import { readPackedTopology } from '../../domain/eudr/packed-topology.ts';

/**
 * The world's countries at Natural Earth 1:10m (world-atlas 2.0.2, countries-10m.json: Natural Earth
 * 4.1.0, public domain, quantised to about 400 × 190 m at the equator, not simplified), read and
 * compiled once per process on first use (about a third of a second), then shared by every plot.
 * world-atlas keys countries by ISO 3166-1 numeric code; i18n-iso-countries maps them to alpha-2.
 * Features without a code (Kosovo, Somaliland, Northern Cyprus, the Siachen Glacier ...) are left
 * out: a plot declared there cannot be decided, never a mismatch. The file is read with its arcs
 * packed (packed-topology.ts), never as a JSON tree: that tree cost the worker +62 MB of RSS.
 */
let compiled: CountryShapes | undefined;

export function worldCountries(): CountryShapes {
  if (!compiled) {
    const require = createRequire(import.meta.url);
    const topology = readPackedTopology(readFileSync(require.resolve('world-atlas/countries-10m.json')));
    compiled = compileCountryShapes(topology, 'countries', (id) => countries.numericToAlpha2(id));
  }
  return compiled;
}
