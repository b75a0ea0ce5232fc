/**
 * Every http(s) resource an HTML document would load: src/srcset attributes, <link href>, CSS url()
 * and @import (a plain <a href> link loads nothing, and Leaflet's source holds one for its
 * attribution, which the report turns off).
 */
export function remoteResources(html: string): string[] {
  return [
    ...html.matchAll(/\b(?:src|srcset)\s*=\s*["']?\s*(?:https?:)?\/\/[^"'\s>]*/gi),
    ...html.matchAll(/<link\b[^>]*\bhref\s*=\s*["']?\s*(?:https?:)?\/\/[^"'\s>]*/gi),
    ...html.matchAll(/url\(\s*["']?\s*(?:https?:)?\/\/[^)]*\)/gi),
    ...html.matchAll(/@import\s+[^;]*/gi),
  ].map((m) => m[0]);
}

/** The report's embedded data (the <script type="application/json" id="ddsync-data"> element), parsed. */
export function reportData<T = Record<string, unknown>>(html: string): T {
  const match = /<script type="application\/json" id="ddsync-data">([\s\S]*?)<\/script>/.exec(html);
  if (!match) throw new Error('the report has no ddsync-data element');
  return JSON.parse(match[1]!) as T;
}
