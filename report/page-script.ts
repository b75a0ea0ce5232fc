// The report page's own script (plain JavaScript, run by the browser; kept as text so the report is
// one file and the CLI bundle carries it). It draws the plots on a canvas layer of Leaflet itself,
// not as one Leaflet layer per plot, so 100,000 plots stay fluid:
//   - zoomed out (zoom < CELL_ZOOM): plots gathered into screen cells of 28 px, one disc per cell,
//     sized by its plots and coloured by its share ready;
//   - middle zooms: each plot a dot, not-ready dots drawn last (on top);
//   - zoomed in (zoom >= POLYGON_ZOOM): each plot in view as its polygon.
// Hover shows a plot's (or a cell's) summary; a click pins the plot's findings in the side panel.
// Texts from the data go into the page with textContent only, never as HTML.
// Written without template literals, "${" or backslashes: it lives in one.
export const PAGE_SCRIPT = `
(function () {
  'use strict';
  var CELL_ZOOM = 7, POLYGON_ZOOM = 12, CELL = 16, GATHER = 28, UNITS = 1e5;
  var COLOURS = ['#d7301f', '#1a9850', '#8c8c8c'];
  var FILLS = ['rgba(215,48,31,0.45)', 'rgba(26,152,80,0.45)', 'rgba(140,140,140,0.45)'];
  var STATES = ['not ready', 'ready', 'readiness unknown'];
  var data = JSON.parse(document.getElementById('ddsync-data').textContent);
  var P = data.plots, n = P.ids.length;
  var report = (window.ddsyncReport = { plots: n, drawn: { mode: 'none', plots: 0, cells: 0 }, selected: null, ready: false });
  var mapElement = document.getElementById('map');
  if (!mapElement) { report.ready = true; return; }

  // Web Mercator at zoom 0 (a 256 px world), as Leaflet's EPSG:3857 projects.
  var MAX_LAT = 85.0511287798;
  function px(lon) { return ((lon + 180) / 360) * 256; }
  function py(lat) {
    var s = Math.sin((Math.max(-MAX_LAT, Math.min(MAX_LAT, lat)) * Math.PI) / 180);
    return (0.5 - Math.log((1 + s) / (1 - s)) / (4 * Math.PI)) * 256;
  }
  var mx = new Float64Array(n), my = new Float64Array(n), located = new Uint8Array(n), byId = {};
  for (var i = 0; i < n; i++) {
    byId[P.ids[i]] = i;
    if (P.x[i] === null) continue;
    located[i] = 1;
    mx[i] = px(P.x[i] / UNITS);
    my[i] = py(P.y[i] / UNITS);
  }
  // Rings in zoom-0 pixels, decoded the first time a plot is drawn as a polygon.
  var ringCache = {};
  function ringsOf(i) {
    var cached = ringCache[i];
    if (cached) return cached;
    var out = [];
    var rings = P.rings[i];
    for (var r = 0; r < rings.length; r++) {
      var ring = rings[r], xs = P.x[i], ys = P.y[i], pts = new Float64Array(ring.length);
      for (var k = 0; k + 1 < ring.length; k += 2) {
        xs += ring[k]; ys += ring[k + 1];
        pts[k] = px(xs / UNITS); pts[k + 1] = py(ys / UNITS);
      }
      out.push(pts);
    }
    return (ringCache[i] = out);
  }
  // Drawing order: ready, unknown, then not ready on top.
  var order = [];
  [1, 2, 0].forEach(function (s) { for (var j = 0; j < n; j++) if (located[j] && P.state[j] === s) order.push(j); });

  var map = L.map(mapElement, { preferCanvas: true, attributionControl: false, worldCopyJump: false, minZoom: 1, maxZoom: 18 });
  var world = JSON.parse(document.getElementById('ddsync-world').textContent);
  var countries = topojson.feature(world, world.objects.countries);
  // Rings that cross the antimeridian (Fiji, Chukotka) jump from +180 to -180: move their western
  // half east of 180 so they are not drawn as a line across the world.
  countries.features.forEach(function (f) {
    var g = f.geometry;
    if (!g) return;
    (g.type === 'Polygon' ? [g.coordinates] : g.type === 'MultiPolygon' ? g.coordinates : []).forEach(function (polygon) {
      polygon.forEach(function (ring) {
        var jumps = ring.some(function (p, k) { return k > 0 && Math.abs(p[0] - ring[k - 1][0]) > 180; });
        if (jumps) ring.forEach(function (p) { if (p[0] < 0) p[0] += 360; });
      });
    });
  });
  L.geoJSON(countries, {
    renderer: L.canvas({ padding: 0.5 }),
    interactive: false,
    style: { color: '#9aa5b1', weight: 0.6, fillColor: '#eef1f4', fillOpacity: 1 },
  }).addTo(map);

  var canvas, ctx, hits = null;
  var PlotLayer = L.Layer.extend({
    onAdd: function (m) {
      canvas = L.DomUtil.create('canvas', 'ddsync-plots leaflet-zoom-hide');
      m.getPanes().overlayPane.appendChild(canvas);
      ctx = canvas.getContext('2d');
      m.on('moveend zoomend resize viewreset', draw);
      draw();
    },
  });

  function draw() {
    var started = performance.now();
    var size = map.getSize(), ratio = window.devicePixelRatio || 1;
    canvas.width = size.x * ratio; canvas.height = size.y * ratio;
    canvas.style.width = size.x + 'px'; canvas.style.height = size.y + 'px';
    var topLeft = map.containerPointToLayerPoint([0, 0]);
    L.DomUtil.setPosition(canvas, topLeft);
    var origin = topLeft.add(map.getPixelOrigin());
    var zoom = map.getZoom(), scale = Math.pow(2, zoom);
    ctx.setTransform(ratio, 0, 0, ratio, 0, 0);
    ctx.clearRect(0, 0, size.x, size.y);
    var view = { w: size.x, h: size.y, ox: origin.x, oy: origin.y, scale: scale };
    if (zoom < CELL_ZOOM) hits = drawCells(view);
    else if (zoom < POLYGON_ZOOM) hits = drawPoints(view, zoom < 10 ? 2.5 : 3.5);
    else hits = drawPolygons(view);
    drawSelection(view);
    report.drawn = { mode: hits.mode, plots: hits.plots, cells: hits.cells || 0, ms: performance.now() - started };
  }

  function screen(i, v) { return [mx[i] * v.scale - v.ox, my[i] * v.scale - v.oy]; }
  function inView(x, y, v, margin) { return x >= -margin && y >= -margin && x <= v.w + margin && y <= v.h + margin; }

  function drawCells(v) {
    var cells = new Map(), plots = 0;
    for (var k = 0; k < order.length; k++) {
      var i = order[k], s = screen(i, v);
      if (!inView(s[0], s[1], v, GATHER)) continue;
      var key = (Math.floor(s[1] / GATHER) + 4) * 100000 + Math.floor(s[0] / GATHER) + 4;
      var c = cells.get(key);
      if (!c) cells.set(key, (c = { x: 0, y: 0, counts: [0, 0, 0], n: 0, first: i }));
      c.x += s[0]; c.y += s[1]; c.counts[P.state[i]]++; c.n++; plots++;
    }
    var list = [];
    cells.forEach(function (c) {
      c.x /= c.n; c.y /= c.n;
      c.r = Math.min(GATHER / 2 - 1, 3 + 1.3 * Math.log2(c.n + 1));
      var known = c.counts[0] + c.counts[1];
      c.colour = known === 0 ? COLOURS[2] : 'hsl(' + Math.round((120 * c.counts[1]) / known) + ',70%,40%)';
      list.push(c);
    });
    list.sort(function (a, b) { return a.n - b.n; });
    ctx.globalAlpha = 0.85; ctx.lineWidth = 1; ctx.strokeStyle = '#ffffff';
    list.forEach(function (c) {
      ctx.beginPath(); ctx.arc(c.x, c.y, c.r, 0, 2 * Math.PI);
      ctx.fillStyle = c.colour; ctx.fill(); ctx.stroke();
    });
    ctx.globalAlpha = 1;
    ctx.fillStyle = '#ffffff'; ctx.font = 'bold 10px sans-serif'; ctx.textAlign = 'center'; ctx.textBaseline = 'middle';
    list.forEach(function (c) { if (c.r >= 11) ctx.fillText(c.n > 999 ? Math.round(c.n / 1000) + 'k' : String(c.n), c.x, c.y); });
    return { mode: 'cells', plots: plots, cells: list.length, list: list };
  }

  function drawPoints(v, radius) {
    var grid = new Map(), plots = 0, state = -1;
    for (var k = 0; k < order.length; k++) {
      var i = order[k], s = screen(i, v);
      if (!inView(s[0], s[1], v, radius)) continue;
      if (P.state[i] !== state) {
        if (state >= 0) ctx.fill();
        state = P.state[i]; ctx.fillStyle = COLOURS[state]; ctx.beginPath();
      }
      ctx.moveTo(s[0] + radius, s[1]); ctx.arc(s[0], s[1], radius, 0, 2 * Math.PI);
      var key = Math.floor(s[1] / CELL) * 100000 + Math.floor(s[0] / CELL);
      var bucket = grid.get(key);
      if (!bucket) grid.set(key, (bucket = []));
      bucket.push(i, s[0], s[1]);
      plots++;
    }
    if (state >= 0) ctx.fill();
    return { mode: 'points', plots: plots, grid: grid, radius: radius };
  }

  function drawPolygons(v) {
    var drawn = [];
    for (var k = 0; k < order.length; k++) {
      var i = order[k], s = screen(i, v);
      if (!inView(s[0], s[1], v, 300)) continue;
      var rings = P.rings[i].length ? ringsOf(i) : [];
      var shape = rings.map(function (ring) {
        var out = new Float64Array(ring.length);
        for (var q = 0; q < ring.length; q += 2) { out[q] = ring[q] * v.scale - v.ox; out[q + 1] = ring[q + 1] * v.scale - v.oy; }
        return out;
      });
      var box = bounds(shape, s);
      if (box[2] < -2 || box[3] < -2 || box[0] > v.w + 2 || box[1] > v.h + 2) continue;
      var tiny = box[2] - box[0] < 4 && box[3] - box[1] < 4;
      ctx.beginPath();
      if (shape.length === 0 || tiny) ctx.arc(s[0], s[1], 5, 0, 2 * Math.PI);
      else shape.forEach(function (ring) { trace(ring); });
      ctx.fillStyle = FILLS[P.state[i]]; ctx.fill('evenodd');
      ctx.strokeStyle = COLOURS[P.state[i]]; ctx.lineWidth = 1.5; ctx.stroke();
      drawn.push({ i: i, shape: shape.length === 0 || tiny ? null : shape, x: s[0], y: s[1] });
    }
    return { mode: 'polygons', plots: drawn.length, drawn: drawn };
  }

  function bounds(shape, s) {
    var b = [s[0], s[1], s[0], s[1]];
    shape.forEach(function (ring) {
      for (var q = 0; q < ring.length; q += 2) {
        if (ring[q] < b[0]) b[0] = ring[q]; if (ring[q] > b[2]) b[2] = ring[q];
        if (ring[q + 1] < b[1]) b[1] = ring[q + 1]; if (ring[q + 1] > b[3]) b[3] = ring[q + 1];
      }
    });
    return b;
  }
  function trace(ring) {
    for (var q = 0; q + 1 < ring.length; q += 2) (q === 0 ? ctx.moveTo : ctx.lineTo).call(ctx, ring[q], ring[q + 1]);
    ctx.closePath();
  }

  function drawSelection(v) {
    if (report.selected === null) return;
    var i = byId[report.selected];
    if (i === undefined || !located[i]) return;
    var s = screen(i, v);
    ctx.lineWidth = 3; ctx.strokeStyle = '#111111';
    ctx.beginPath();
    if (map.getZoom() >= POLYGON_ZOOM && P.rings[i].length) {
      ringsOf(i).forEach(function (ring) {
        var out = new Float64Array(ring.length);
        for (var q = 0; q < ring.length; q += 2) { out[q] = ring[q] * v.scale - v.ox; out[q + 1] = ring[q + 1] * v.scale - v.oy; }
        trace(out);
      });
    } else ctx.arc(s[0], s[1], 8, 0, 2 * Math.PI);
    ctx.stroke();
  }

  function inside(x, y, ring) {
    var hit = false;
    for (var a = 0, b = ring.length - 2; a < ring.length; b = a, a += 2) {
      var xa = ring[a], ya = ring[a + 1], xb = ring[b], yb = ring[b + 1];
      if (ya > y !== yb > y && x < ((xb - xa) * (y - ya)) / (yb - ya) + xa) hit = !hit;
    }
    return hit;
  }

  /** What is under a container point: {plot: i} or {cell: c} or null. */
  function hitAt(x, y) {
    if (!hits) return null;
    if (hits.mode === 'cells') {
      var best = null;
      hits.list.forEach(function (c) { if (Math.hypot(c.x - x, c.y - y) <= c.r + 2 && (!best || c.n > best.n)) best = c; });
      return best ? { cell: best } : null;
    }
    if (hits.mode === 'points') {
      var found = null, dist = hits.radius + 4;
      for (var gy = Math.floor(y / CELL) - 1; gy <= Math.floor(y / CELL) + 1; gy++)
        for (var gx = Math.floor(x / CELL) - 1; gx <= Math.floor(x / CELL) + 1; gx++) {
          var bucket = hits.grid.get(gy * 100000 + gx);
          if (!bucket) continue;
          for (var q = 0; q < bucket.length; q += 3) {
            var d = Math.hypot(bucket[q + 1] - x, bucket[q + 2] - y);
            if (d <= dist) { dist = d; found = bucket[q]; }
          }
        }
      return found === null ? null : { plot: found };
    }
    for (var k = hits.drawn.length - 1; k >= 0; k--) {
      var e = hits.drawn[k];
      if (e.shape ? e.shape.some(function (ring) { return inside(x, y, ring); }) : Math.hypot(e.x - x, e.y - y) <= 7)
        return { plot: e.i };
    }
    return null;
  }

  // ── Texts (textContent only) ──
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function plotTitle(i) { return P.names[i] ? P.names[i] : P.ids[i]; }
  function countryRisk(i) { return P.countryRisk[i] < 0 ? '(no country)' : data.countryRiskLevels[P.countryRisk[i]]; }
  function supplierNames(i) { return P.suppliers[i].map(function (s) { return data.suppliers[s][1]; }).join(', '); }
  function summary(i) {
    var f = P.findings[i].map(function (k) { return data.findings[k]; });
    var blocking = f.filter(function (x) { return x[1] === 'blocking'; }).length;
    return plotTitle(i) + ' — ' + STATES[P.state[i]] + (blocking ? ' (' + blocking + ' blocking)' : '') +
      (P.countryRisk[i] < 0 ? '' : ', country risk ' + countryRisk(i)) +
      (f.length ? ': ' + f.map(function (x) { return x[0]; }).join(', ') : '');
  }

  var tooltip = el('div', 'tooltip');
  tooltip.hidden = true;
  mapElement.appendChild(tooltip);
  map.on('mousemove', function (e) {
    var hit = hitAt(e.containerPoint.x, e.containerPoint.y);
    if (!hit) { tooltip.hidden = true; mapElement.style.cursor = ''; return; }
    var c = hit.cell;
    tooltip.textContent = c
      ? c.n + ' plots: ' + c.counts[1] + ' ready, ' + c.counts[0] + ' not ready' + (c.counts[2] ? ', ' + c.counts[2] + ' unknown' : '') + ' (click to zoom in)'
      : summary(hit.plot);
    tooltip.style.left = e.containerPoint.x + 14 + 'px';
    tooltip.style.top = e.containerPoint.y + 10 + 'px';
    tooltip.hidden = false;
    mapElement.style.cursor = 'pointer';
  });
  map.on('mouseout movestart zoomstart', function () { tooltip.hidden = true; });
  map.on('click', function (e) {
    var hit = hitAt(e.containerPoint.x, e.containerPoint.y);
    if (!hit) return;
    if (hit.cell) { map.setView(map.containerPointToLatLng([hit.cell.x, hit.cell.y]), Math.min(map.getZoom() + 3, POLYGON_ZOOM)); return; }
    showPlot(hit.plot);
  });

  var details = document.getElementById('details');
  function showPlot(i) {
    report.selected = P.ids[i];
    details.textContent = '';
    details.appendChild(el('h3', '', plotTitle(i)));
    var facts = el('dl');
    [['Plot id', P.ids[i]], ['Readiness', STATES[P.state[i]]], ['Suppliers', supplierNames(i) || '(own plot)'],
     ['Country', P.country[i] || '(missing)'], ['Country risk', countryRisk(i)],
     ['Hectares', P.area[i] === null ? '(unknown)' : String(P.area[i])]]
      .forEach(function (row) { facts.appendChild(el('dt', '', row[0])); facts.appendChild(el('dd', '', row[1])); });
    details.appendChild(facts);
    var findings = P.findings[i];
    if (findings.length === 0) details.appendChild(el('p', 'none', 'No finding: nothing stops this plot going into a statement.'));
    else {
      var list = el('ul', 'findings');
      findings.forEach(function (k) {
        var f = data.findings[k], item = el('li', 'finding ' + f[1]);
        item.setAttribute('data-code', f[0]);
        item.appendChild(el('span', 'severity', f[1]));
        item.appendChild(el('code', '', f[0]));
        item.appendChild(el('span', 'message', f[2]));
        list.appendChild(item);
      });
      details.appendChild(list);
    }
    if (hits) draw();
  }
  /** Ids of the plots drawn one by one (dots or polygons) in the current view; [] when gathered in discs. */
  report.drawnIds = function () {
    if (!hits || hits.mode === 'cells') return [];
    if (hits.mode === 'polygons') return hits.drawn.map(function (e) { return P.ids[e.i]; });
    var ids = [];
    hits.grid.forEach(function (bucket) { for (var q = 0; q < bucket.length; q += 3) ids.push(P.ids[bucket[q]]); });
    return ids;
  };
  report.showPlot = function (id) { var i = byId[id]; if (i !== undefined) showPlot(i); };

  /** Centres the map on a plot at a zoom where it is a polygon; returns its container point (tests, links). */
  report.focusPlot = function (id, zoom) {
    var i = byId[id];
    if (i === undefined || !located[i]) return null;
    map.setView([P.y[i] / UNITS, P.x[i] / UNITS], zoom || 15, { animate: false });
    draw();
    var p = map.latLngToContainerPoint([P.y[i] / UNITS, P.x[i] / UNITS]);
    return { x: p.x, y: p.y, mode: report.drawn.mode };
  };

  // Supplier rows and chart bars zoom the map to the supplier's plots.
  function fitSupplier(id) {
    var s = data.suppliers.findIndex(function (x) { return x[0] === id; });
    if (s < 0) return;
    var b = null;
    for (var j = 0; j < n; j++) {
      if (!located[j] || P.suppliers[j].indexOf(s) < 0) continue;
      var ll = [P.y[j] / UNITS, P.x[j] / UNITS];
      if (b) b.extend(ll); else b = L.latLngBounds(ll, ll);
    }
    if (b) { map.fitBounds(b.pad(0.05), { animate: false, maxZoom: POLYGON_ZOOM }); mapElement.scrollIntoView({ block: 'nearest' }); }
  }
  document.querySelectorAll('[data-supplier]').forEach(function (row) {
    row.addEventListener('click', function () { fitSupplier(row.getAttribute('data-supplier')); });
  });

  new PlotLayer().addTo(map);
  var all = null;
  for (var j = 0; j < n; j++) {
    if (!located[j]) continue;
    var ll = [P.y[j] / UNITS, P.x[j] / UNITS];
    if (all) all.extend(ll); else all = L.latLngBounds(ll, ll);
  }
  if (all) map.fitBounds(all.pad(0.1), { animate: false, maxZoom: POLYGON_ZOOM });
  else map.setView([10, 0], 2, { animate: false });
  report.ready = true;
})();
`;
