// Escaping for the report's HTML. Every text that comes from the warehouse (plot and supplier names,
// finding messages, ids) goes through one of these: a plot named `</script><img onerror=…>` is text.

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text for HTML content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ENTITIES[c]!);
}

/**
 * JSON to embed in a <script type="application/json"> element: `<`, `>` and `&` as \u escapes, so no
 * text inside can close the element or open a comment (JSON.parse reads the escapes back), and the
 * line separators U+2028/U+2029 escaped too.
 */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A library's JavaScript inside a <script> element: a `</script` in it (in a string) must not end the element. */
export function scriptText(source: string): string {
  return source.replace(/<\/(script)/gi, '<\\/$1').replace(/<!--/g, '<\\!--');
}

/** A stylesheet inside a <style> element: comments dropped (leaflet's name bug-tracker URLs), no `</style`. */
export function styleText(css: string): string {
  return css.replace(/\/\*[\s\S]*?\*\//g, '').replace(/<\/(style)/gi, '<\\/$1');
}
