// `make bench-ui` (tests/system/bench_ui.py): what a browser with a cold cache transfers to
// show a path page, and how long the page takes to draw its first chart. Signs in once; each
// load then runs in a new browser context (an empty cache) holding only the session cookie,
// and counts every response's bytes on the wire (Chromium's encodedDataLength: compressed
// body and headers) by what it was, until the network has been idle for 500 ms.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_PATH_URL (/paths/<source>/<destination>),
//      FATHOM_BENCH_UI_LOADS (cold loads, default 5), FATHOM_ARTIFACTS (the page's screenshot)
import { writeFileSync } from 'node:fs';

import { artifact, env, expect, seen, signInAtLogin, test, watchPage } from './fixtures';

interface Load {
  bytes: number;
  requests: number;
  bytesByKind: Record<string, number>;
  uncompressed: string[];
  firstChartMs: number;
  domContentLoadedMs: number;
  /** When the responses the chart waits for had arrived: Plotly's script, the path's history. */
  plotlyMs: number;
  historyMs: number;
  /** Each response: what, when its request started and when it ended (ms since navigation). */
  waterfall: [string, number, number][];
}

declare global {
  interface Window {
    fathomFirstChartMs?: number;
  }
}

/** Runs in the page before its own scripts: notes when the history chart first shows data
 * (a line of two points or more, a marker or a bar), in ms since the navigation started. */
function watchFirstChart(): void {
  const drawn = (): boolean => {
    const chart = document.querySelector('[data-testid="history-chart"].js-plotly-plot');
    if (!chart) return false;
    const lines = [...chart.querySelectorAll('g.scatterlayer path.js-line')].some((path) =>
      (path.getAttribute('d') ?? '').includes('L'),
    );
    return lines || chart.querySelector('g.scatterlayer path.point, g.barlayer g.point') !== null;
  };
  const observer = new MutationObserver(() => {
    if (window.fathomFirstChartMs === undefined && drawn()) {
      window.fathomFirstChartMs = performance.now();
      observer.disconnect();
    }
  });
  observer.observe(document, { childList: true, subtree: true, attributes: true });
}

/** What a response was, for the table: the page, scripts, styles, the API's JSON, the rest. */
function kindOf(url: string, type: string): string {
  if (type === 'Document') return 'document';
  if (type === 'Script') return 'scripts';
  if (type === 'Stylesheet') return 'styles';
  if (new URL(url).pathname.startsWith('/api/')) return 'api';
  return 'other';
}

const loads = Number(process.env.FATHOM_BENCH_UI_LOADS ?? '5');

test('a path page from a cold cache', async ({ browser }) => {
  const baseURL = env('FATHOM_URL');
  test.setTimeout(60_000 + loads * 30_000);
  const signedIn = await browser.newContext({ baseURL });
  const login = await signedIn.newPage();
  await signInAtLogin(login);
  const storageState = await signedIn.storageState();
  await signedIn.close();

  const results: Load[] = [];
  for (let index = 0; index < loads; index += 1) {
    const context = await browser.newContext({ baseURL, storageState, viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    const { consoleErrors } = watchPage(page);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    const responses = new Map<string, { kind: string; compressed: boolean; url: string }>();
    const load: Load = { bytes: 0, requests: 0, bytesByKind: {}, uncompressed: [], firstChartMs: NaN, domContentLoadedMs: NaN, plotlyMs: NaN, historyMs: NaN, waterfall: [] };
    cdp.on('Network.responseReceived', ({ requestId, response, type }) => {
      const encoding = Object.entries(response.headers).find(([name]) => name.toLowerCase() === 'content-encoding');
      responses.set(requestId, { kind: kindOf(response.url, type), compressed: encoding !== undefined, url: response.url });
    });
    cdp.on('Network.loadingFinished', ({ requestId, encodedDataLength }) => {
      const response = responses.get(requestId);
      const kind = response?.kind ?? 'other';
      load.bytes += encodedDataLength;
      load.requests += 1;
      load.bytesByKind[kind] = (load.bytesByKind[kind] ?? 0) + encodedDataLength;
      // Text that travels as it is: a script, style or page over 1 KB without compression.
      if (response && !response.compressed && kind !== 'api' && encodedDataLength > 1024) {
        load.uncompressed.push(`${new URL(response.url).pathname} (${encodedDataLength} B)`);
      }
    });
    await page.addInitScript(watchFirstChart);
    const profiling = index === 0 && process.env.FATHOM_BENCH_UI_PROFILE;
    if (profiling) {
      await cdp.send('Profiler.enable');
      await cdp.send('Profiler.setSamplingInterval', { interval: 500 });
      await cdp.send('Profiler.start');
    }
    await page.goto(env('FATHOM_PATH_URL'));
    await expect.poll(() => page.evaluate(() => window.fathomFirstChartMs), { timeout: 30_000 }).toBeDefined();
    await page.waitForLoadState('networkidle');
    if (profiling) {
      const { profile } = await cdp.send('Profiler.stop');
      writeFileSync(profiling, JSON.stringify(profile));
    }
    load.firstChartMs = (await page.evaluate(() => window.fathomFirstChartMs)) ?? NaN;
    Object.assign(
      load,
      await page.evaluate(() => {
        const [navigation] = performance.getEntriesByType('navigation') as PerformanceNavigationTiming[];
        const arrived = (part: string) =>
          (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).find((entry) => entry.name.includes(part))
            ?.responseEnd ?? NaN;
        const waterfall = (performance.getEntriesByType('resource') as PerformanceResourceTiming[]).map(
          (entry): [string, number, number] => [new URL(entry.name).pathname, entry.fetchStart, entry.responseEnd],
        );
        return {
          waterfall,
          domContentLoadedMs: navigation?.domContentLoadedEventEnd ?? NaN,
          plotlyMs: arrived('/plotly-basic'),
          historyMs: arrived('/api/v1/paths/history/'),
        };
      }),
    );
    if (index === 0) await page.screenshot({ path: artifact('bench-ui-path-page.png'), fullPage: true });
    expect(consoleErrors, 'the page logged errors to the console').toEqual([]);
    results.push(load);
    await context.close();
  }
  await seen({ loads: results });
});
