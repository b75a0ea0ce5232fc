// Client validation of one 500-plot page as the service sends it (~1 MB of JSON): JSON.parse, the
// focused plot validator ddsync uses (upstream/plot-validator.ts), and zod's PlotSchema it replaced,
// on the same text in the same run. Prints figures and ratios only; never passes or fails on time.
// Usage: npx tsx bench/validation.ts [--runs 40] [--plots 500] [--json]
import { z } from 'zod';
import { PlotSchema } from '../schema/upstream.ts';
import { normalisePlots } from '../upstream/plot-validator.ts';
import { samplePage } from '../test/unit/upstream/samples.ts';
import { median, positiveFlag } from './support/figures.ts';

const ENDPOINT = 'GET /businesses/{businessId}/plots';

const runs = positiveFlag('runs', 40);
const plots = positiveFlag('plots', 500);
const text = JSON.stringify(samplePage(plots));
const zodPage = z.array(PlotSchema);
const parse: number[] = [];
const focused: number[] = [];
const viaZod: number[] = [];
for (let i = 0; i < runs; i++) {
  let t = performance.now();
  const a = JSON.parse(text) as unknown;
  parse.push(performance.now() - t);
  t = performance.now();
  normalisePlots(a, ENDPOINT);
  focused.push(performance.now() - t);
  // The focused validator normalises in place: zod gets a fresh parse of the same text.
  const b = JSON.parse(text) as unknown;
  t = performance.now();
  zodPage.parse(b);
  viaZod.push(performance.now() - t);
}
const ms = { parse: median(parse), focused: median(focused), zod: median(viaZod) };
console.log(
  `validation: ${plots}-plot page, ${(text.length / 1e6).toFixed(2)} MB of JSON, median of ${runs} runs (node ${process.version}; the first runs are cold)`,
);
console.log(`JSON.parse              ${ms.parse.toFixed(2).padStart(7)} ms`);
console.log(
  `focused validator       ${ms.focused.toFixed(2).padStart(7)} ms   ${(ms.focused / ms.parse).toFixed(2)}x JSON.parse`,
);
console.log(
  `zod PlotSchema          ${ms.zod.toFixed(2).padStart(7)} ms   ${(ms.zod / ms.parse).toFixed(2)}x JSON.parse, ${(ms.zod / ms.focused).toFixed(1)}x the focused validator`,
);
if (process.argv.includes('--json')) {
  console.log(
    JSON.stringify({
      runs,
      plots,
      megabytes: text.length / 1e6,
      parseMs: ms.parse,
      focusedMs: ms.focused,
      zodMs: ms.zod,
      focusedToParse: ms.focused / ms.parse,
      zodToFocused: ms.zod / ms.focused,
    }),
  );
}
