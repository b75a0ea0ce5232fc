// The report page's stylesheet (inlined, like everything the page uses).
export const PAGE_STYLE = `
:root { --ready: #1a9850; --not-ready: #d7301f; --unknown: #8c8c8c; --ink: #1f2933; --muted: #5f6b7a; --line: #d9dee4; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink); background: #f7f8fa; }
header, main, footer { max-width: 1280px; margin: 0 auto; padding: 0 20px; }
header { padding-top: 18px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 22px 0 10px; }
.scope, .mode-line { margin: 2px 0; color: var(--muted); }
.mode { font-weight: 600; padding: 1px 6px; border-radius: 4px; }
.mode.on { background: #e3f3e8; color: #145c33; }
.mode.off { background: #fdf0dc; color: #7a4a00; }
.totals { list-style: none; display: flex; flex-wrap: wrap; gap: 10px; padding: 0; margin: 12px 0 14px; }
.totals li { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 6px 12px; }
.totals strong { font-size: 18px; margin-right: 4px; }
.totals .ready strong { color: var(--ready); }
.totals .not-ready strong { color: var(--not-ready); }
.totals .unknown strong { color: var(--unknown); }
.map-row { display: flex; gap: 14px; align-items: stretch; }
#map { position: relative; flex: 1 1 auto; height: 560px; border: 1px solid var(--line); border-radius: 6px; background: #cfe3f2; }
aside { flex: 0 0 320px; display: flex; flex-direction: column; gap: 10px; }
.legend, #details { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
#details { flex: 1 1 auto; overflow: auto; max-height: 440px; }
.legend div { margin: 3px 0; color: var(--muted); }
.colour-by { border: 0; padding: 0 0 6px; margin: 0 0 6px; border-bottom: 1px solid var(--line); }
.colour-by legend { padding: 0; font-weight: 600; }
.colour-by label { margin-right: 12px; cursor: pointer; }
.legend .count { font-variant-numeric: tabular-nums; color: var(--ink); }
.swatch { display: inline-block; width: 12px; height: 12px; border-radius: 50%; margin-right: 8px; vertical-align: -1px; }
.gradient { display: block; height: 8px; margin: 6px 0 4px; border-radius: 4px; background: linear-gradient(90deg, hsl(0,70%,40%), hsl(60,70%,40%), hsl(120,70%,40%)); }
.hint, .none, .note, .empty { color: var(--muted); }
#details h3 { margin: 0 0 6px; font-size: 16px; overflow-wrap: anywhere; }
#details dl { display: grid; grid-template-columns: auto 1fr; gap: 2px 10px; margin: 0 0 8px; }
#details dt { color: var(--muted); }
#details dd { margin: 0; overflow-wrap: anywhere; }
.findings { list-style: none; padding: 0; margin: 0; }
.finding { border-left: 4px solid var(--unknown); padding: 4px 8px; margin: 6px 0; background: #fafbfc; }
.finding.blocking { border-color: var(--not-ready); }
.finding.warning { border-color: #e69f00; }
.finding .severity { font-size: 11px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); margin-right: 6px; }
.finding code { font-weight: 600; }
.finding .message { display: block; }
.tooltip { position: absolute; z-index: 1000; pointer-events: none; max-width: 360px; background: rgba(31,41,51,.92); color: #fff; padding: 5px 8px; border-radius: 4px; font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 10px 40px; }
.chart { max-width: 100%; height: auto; font-size: 12px; fill: var(--ink); }
.chart .bar { cursor: pointer; }
table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid var(--line); }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: #eef1f4; font-weight: 600; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tbody tr { cursor: pointer; }
tbody tr:hover { background: #f3f6f9; }
td code { color: var(--muted); font-size: 12px; }
td.risk.high { color: var(--not-ready); font-weight: 600; }
td.risk.low { color: var(--ready); }
td.risk.unknown, td.risk.none { color: var(--unknown); }
.empty-report { background: #fff; border: 1px solid var(--line); border-radius: 6px; padding: 16px 20px; }
footer { color: var(--muted); font-size: 12px; padding: 24px 20px 30px; }
canvas.ddsync-plots { position: absolute; left: 0; top: 0; pointer-events: none; }
`;
