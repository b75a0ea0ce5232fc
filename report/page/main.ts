import type { PageData } from '../page-data.ts';
import { COLOUR_BY, type ColourBy, type Colouring, countryRiskColouring, readinessColouring } from './colours.ts';
import { type Hits, hitAt, PlotPainter, POLYGON_ZOOM } from './draw.ts';
import { PlotPositions, type View } from './geometry.ts';
import { PlotTexts, el } from './panel.ts';

// The report page's own script, run by the browser (bundled by report/page-bundle.ts into the page,
// after Leaflet and topojson-client). It draws the plots on a canvas layer of Leaflet itself, not as
// one Leaflet layer per plot, so 100,000 plots stay fluid (report/page/draw.ts). Hover shows a plot's
// (or a disc's) summary; a click pins the plot's findings in the side panel. The legend's switch
// colours the plots by readiness or by their country's risk level.
// window.ddsyncReport says what was drawn and lets tests and links steer the map.

interface ReportApi {
  plots: number;
  drawn: { mode: string; plots: number; cells: number; ms?: number; colourBy?: ColourBy };
  selected: string | null;
  ready: boolean;
  colourBy?: ColourBy;
  drawnIds?: () => string[];
  showPlot?: (id: string) => void;
  focusPlot?: (id: string, zoom?: number) => { x: number; y: number; mode: string } | null;
}

declare global {
  interface Window {
    ddsyncReport: ReportApi;
  }
}

function json<T>(id: string): T {
  return JSON.parse(document.getElementById(id)!.textContent!) as T;
}

function start(): void {
  const data = json<PageData>('ddsync-data');
  const P = data.plots;
  const n = P.ids.length;
  const report: ReportApi = {
    plots: n,
    drawn: { mode: 'none', plots: 0, cells: 0 },
    selected: null,
    ready: false,
  };
  window.ddsyncReport = report;
  const mapElement = document.getElementById('map');
  if (!mapElement) {
    report.ready = true;
    return;
  }

  const positions = new PlotPositions(P);
  const colourings: Record<ColourBy, Colouring> = { readiness: readinessColouring(P), risk: countryRiskColouring(P) };
  const texts = new PlotTexts(data);

  const map = L.map(mapElement, {
    preferCanvas: true,
    attributionControl: false,
    worldCopyJump: false,
    minZoom: 1,
    maxZoom: 18,
  });
  const world = json<unknown>('ddsync-world');
  const countries = topojson.feature(world, (world as { objects: { countries: unknown } }).objects.countries);
  // Rings that cross the antimeridian (Fiji, Chukotka) jump from +180 to -180: move their western
  // half east of 180 so they are not drawn as a line across the world.
  for (const f of countries.features) {
    const g = f.geometry;
    if (!g) continue;
    const polygons = (
      g.type === 'Polygon' ? [g.coordinates] : g.type === 'MultiPolygon' ? g.coordinates : []
    ) as number[][][][];
    for (const polygon of polygons)
      for (const ring of polygon) {
        const jumps = ring.some((p, k) => k > 0 && Math.abs(p[0]! - ring[k - 1]![0]!) > 180);
        if (jumps) for (const p of ring) if (p[0]! < 0) p[0]! += 360;
      }
  }
  L.geoJSON(countries, {
    renderer: L.canvas({ padding: 0.5 }),
    interactive: false,
    style: { color: '#9aa5b1', weight: 0.6, fillColor: '#eef1f4', fillOpacity: 1 },
  }).addTo(map);

  let canvas: HTMLCanvasElement;
  let painter: PlotPainter | undefined;
  let hits: Hits | null = null;
  let colouring = colourings.readiness;
  const PlotLayer = L.Layer.extend({
    onAdd(m: L.Map) {
      canvas = L.DomUtil.create('canvas', 'ddsync-plots leaflet-zoom-hide') as HTMLCanvasElement;
      m.getPanes().overlayPane.appendChild(canvas);
      painter = new PlotPainter(canvas.getContext('2d')!, positions, colouring);
      m.on('moveend zoomend resize viewreset', draw);
      draw();
    },
  });

  function draw(): void {
    const started = performance.now();
    const size = map.getSize();
    const ratio = window.devicePixelRatio || 1;
    canvas.width = size.x * ratio;
    canvas.height = size.y * ratio;
    canvas.style.width = `${size.x}px`;
    canvas.style.height = `${size.y}px`;
    const topLeft = map.containerPointToLayerPoint([0, 0]);
    L.DomUtil.setPosition(canvas, topLeft);
    const origin = topLeft.add(map.getPixelOrigin());
    const zoom = map.getZoom();
    const ctx = canvas.getContext('2d')!;
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, size.x, size.y);
    const view: View = { w: size.x, h: size.y, ox: origin.x, oy: origin.y, scale: 2 ** zoom };
    if (!painter) return;
    hits = painter.draw(view, zoom);
    const selected = report.selected === null ? undefined : positions.byId.get(report.selected);
    if (selected !== undefined && positions.located[selected]) painter.drawSelection(selected, view, zoom);
    report.drawn = {
      mode: hits.mode,
      plots: hits.plots,
      cells: hits.mode === 'cells' ? hits.cells : 0,
      ms: performance.now() - started,
      colourBy: colouring.by,
    };
  }

  // The legend's switch: readiness or country risk, each with its own legend.
  function colourBy(by: ColourBy): void {
    colouring = colourings[by];
    report.colourBy = by;
    for (const legend of document.querySelectorAll<HTMLElement>('[data-legend]'))
      legend.hidden = legend.getAttribute('data-legend') !== by;
    for (const input of document.querySelectorAll<HTMLInputElement>('input[name="colour-by"]'))
      input.checked = input.value === by;
    if (painter) {
      painter.colouring = colouring;
      draw();
    }
  }
  for (const input of document.querySelectorAll<HTMLInputElement>('input[name="colour-by"]'))
    input.addEventListener('change', () => {
      if (input.checked && (COLOUR_BY as readonly string[]).includes(input.value)) colourBy(input.value as ColourBy);
    });

  const tooltip = el('div', 'tooltip');
  tooltip.hidden = true;
  mapElement.appendChild(tooltip);
  map.on('mousemove', (e) => {
    const hit = hitAt(hits, e.containerPoint.x, e.containerPoint.y);
    if (!hit) {
      tooltip.hidden = true;
      mapElement.style.cursor = '';
      return;
    }
    tooltip.textContent = 'cell' in hit ? colouring.cellSummary(hit.cell.n, hit.cell.counts) : texts.summary(hit.plot);
    tooltip.style.left = `${e.containerPoint.x + 14}px`;
    tooltip.style.top = `${e.containerPoint.y + 10}px`;
    tooltip.hidden = false;
    mapElement.style.cursor = 'pointer';
  });
  map.on('mouseout movestart zoomstart', () => {
    tooltip.hidden = true;
  });
  map.on('click', (e) => {
    const hit = hitAt(hits, e.containerPoint.x, e.containerPoint.y);
    if (!hit) return;
    if ('cell' in hit) {
      map.setView(map.containerPointToLatLng([hit.cell.x, hit.cell.y]), Math.min(map.getZoom() + 3, POLYGON_ZOOM));
      return;
    }
    showPlot(hit.plot);
  });

  const details = document.getElementById('details')!;
  function showPlot(i: number): void {
    report.selected = P.ids[i]!;
    texts.showIn(details, i);
    if (hits) draw();
  }
  /** Ids of the plots drawn one by one (dots or polygons) in the current view; [] when gathered in discs. */
  report.drawnIds = () => {
    if (!hits || hits.mode === 'cells') return [];
    if (hits.mode === 'polygons') return hits.drawn.map((e) => P.ids[e.i]!);
    const ids: string[] = [];
    for (const bucket of hits.grid.values()) for (let q = 0; q < bucket.length; q += 3) ids.push(P.ids[bucket[q]!]!);
    return ids;
  };
  report.showPlot = (id) => {
    const i = positions.byId.get(id);
    if (i !== undefined) showPlot(i);
  };
  /** Centres the map on a plot at a zoom where it is a polygon; returns its container point (tests, links). */
  report.focusPlot = (id, zoom) => {
    const i = positions.byId.get(id);
    if (i === undefined || !positions.located[i]) return null;
    map.setView(positions.latLng(i), zoom || 15, { animate: false });
    draw();
    const p = map.latLngToContainerPoint(positions.latLng(i));
    return { x: p.x, y: p.y, mode: report.drawn.mode };
  };

  /** The bounds of the located plots that pass the filter, or null when none does. */
  function boundsOf(keep: (i: number) => boolean): L.LatLngBounds | null {
    let b: L.LatLngBounds | null = null;
    for (let j = 0; j < n; j++) {
      if (!positions.located[j] || !keep(j)) continue;
      const ll = positions.latLng(j);
      if (b) b.extend(ll);
      else b = L.latLngBounds(ll, ll);
    }
    return b;
  }
  // Supplier rows and chart bars zoom the map to the supplier's plots.
  function fitSupplier(id: string | null): void {
    const s = data.suppliers.findIndex((x) => x[0] === id);
    if (s < 0) return;
    const b = boundsOf((j) => P.suppliers[j]!.indexOf(s) >= 0);
    if (b) {
      map.fitBounds(b.pad(0.05), { animate: false, maxZoom: POLYGON_ZOOM });
      mapElement!.scrollIntoView({ block: 'nearest' });
    }
  }
  for (const row of document.querySelectorAll('[data-supplier]'))
    row.addEventListener('click', () => fitSupplier(row.getAttribute('data-supplier')));

  colourBy('readiness');
  new PlotLayer().addTo(map);
  const all = boundsOf(() => true);
  if (all) map.fitBounds(all.pad(0.1), { animate: false, maxZoom: POLYGON_ZOOM });
  else map.setView([10, 0], 2, { animate: false });
  report.ready = true;
}

start();
