import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';

// A real browser for the HTML report: Debian's chromium driven by playwright-core (no browser is
// downloaded). Every http(s) request is refused and recorded: the report must need none.

/** Debian's package; CHROMIUM_PATH points elsewhere when needed. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `Chromium is missing at ${CHROMIUM}: the report's browser test needs it. Install Debian's package: apt-get install -y chromium (or set CHROMIUM_PATH)`,
    );
  return chromium.launch({ executablePath: CHROMIUM, args: ['--headless=new', '--no-sandbox'], headless: true });
}

export interface OpenedReport {
  page: Page;
  /** Every http(s) URL the page asked for (each was refused). */
  networkRequests: string[];
  /** Console errors and uncaught exceptions of the page. */
  pageErrors: string[];
  /** Milliseconds from navigation to the map drawn (window.ddsyncReport.ready). */
  drawMs: number;
}

export async function openReport(
  browser: Browser,
  file: string,
  viewport = { width: 1400, height: 1000 },
): Promise<OpenedReport> {
  const context = await browser.newContext({ viewport });
  const networkRequests: string[] = [];
  const pageErrors: string[] = [];
  await context.route(/^https?:/, (route) => {
    networkRequests.push(route.request().url());
    return route.abort('blockedbyclient');
  });
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') pageErrors.push(message.text());
  });
  const started = performance.now();
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load', timeout: 120_000 });
  await page.waitForFunction(
    () => (globalThis as unknown as { ddsyncReport?: { ready: boolean } }).ddsyncReport?.ready,
    null,
    {
      timeout: 120_000,
    },
  );
  const drawMs = performance.now() - started;
  return { page, networkRequests, pageErrors, drawMs };
}

/** What the page says it drew (window.ddsyncReport.drawn). */
export interface Drawn {
  mode: 'cells' | 'points' | 'polygons' | 'none';
  plots: number;
  cells: number;
  /** Milliseconds the plot layer took to draw. */
  ms: number;
}

export function drawn(page: Page): Promise<Drawn> {
  return page.evaluate(() => (globalThis as unknown as { ddsyncReport: { drawn: Drawn } }).ddsyncReport.drawn);
}

/** Centres the map on a plot (window.ddsyncReport.focusPlot) and returns its point in the page. */
export async function focusPlot(
  page: Page,
  plotId: string,
  zoom = 15,
): Promise<{ x: number; y: number; mode: string }> {
  const inMap = await page.evaluate(
    ([id, z]) =>
      (
        globalThis as unknown as {
          ddsyncReport: { focusPlot(id: string, zoom: number): { x: number; y: number; mode: string } | null };
        }
      ).ddsyncReport.focusPlot(id as string, z as number),
    [plotId, zoom] as const,
  );
  if (!inMap) throw new Error(`plot ${plotId} is not on the map`);
  const box = (await page.locator('#map').boundingBox())!;
  return { x: box.x + inMap.x, y: box.y + inMap.y, mode: inMap.mode };
}

/** Share of the plot canvas's pixels painted (0 = nothing drawn). */
export async function canvasInk(page: Page): Promise<number> {
  // Run in the page (a string: this project compiles without the DOM's types): the canvas's painted pixels.
  return page.evaluate(`(() => {
    const canvas = document.querySelector('canvas.ddsync-plots');
    if (!canvas) return 0;
    const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    let ink = 0;
    for (let i = 3; i < pixels.length; i += 4) if (pixels[i] > 0) ink++;
    return ink / (pixels.length / 4);
  })()`);
}

/** How many pixels of the plot canvas are exactly each of these colours ('#rrggbb', opaque): what the map painted, by colour. */
export async function canvasColours(page: Page, colours: readonly string[]): Promise<Record<string, number>> {
  return page.evaluate(`((colours) => {
    const canvas = document.querySelector('canvas.ddsync-plots');
    const counts = Object.fromEntries(colours.map((c) => [c, 0]));
    if (!canvas) return counts;
    const rgb = colours.map((c) => [parseInt(c.slice(1, 3), 16), parseInt(c.slice(3, 5), 16), parseInt(c.slice(5, 7), 16)]);
    const pixels = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
    for (let i = 0; i < pixels.length; i += 4) {
      if (pixels[i + 3] !== 255) continue;
      for (let k = 0; k < rgb.length; k++)
        if (pixels[i] === rgb[k][0] && pixels[i + 1] === rgb[k][1] && pixels[i + 2] === rgb[k][2]) counts[colours[k]]++;
    }
    return counts;
  })(${JSON.stringify(colours)})`);
}

/**
 * The colour the plot canvas has at a point of the page (as focusPlot returns it): '#rrggbb' where it
 * is opaque, '#rrggbbaa' elsewhere ('#00000000' where nothing is drawn). The pixel is the one whose
 * square holds the point.
 */
export async function canvasColourAt(page: Page, at: { x: number; y: number }): Promise<string> {
  return page.evaluate(`((x, y) => {
    const map = document.getElementById('map');
    const box = map.getBoundingClientRect();
    const canvas = document.querySelector('canvas.ddsync-plots');
    const ratio = window.devicePixelRatio || 1;
    const cx = x - box.left - map.clientLeft, cy = y - box.top - map.clientTop;
    const [r, g, b, a] = canvas.getContext('2d').getImageData(Math.floor(cx * ratio), Math.floor(cy * ratio), 1, 1).data;
    return '#' + (a === 255 ? [r, g, b] : [r, g, b, a]).map((v) => v.toString(16).padStart(2, '0')).join('');
  })(${at.x}, ${at.y})`);
}
