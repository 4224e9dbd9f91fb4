// The README's screenshots, from `make demo`'s own data (deploy/demo-screenshots.sh runs the
// demo and then this). Waits until the demo's ECMP path has enough history to show, then
// photographs the path page's history chart and routes, the Paths list, the grid, the
// Findings page (when there is a finding) and the Schedule. Fails with a reason when a view
// does not render.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_ARTIFACTS (where the PNGs go),
//      FATHOM_SHOTS_SOURCE / FATHOM_SHOTS_DESTINATION (agent names; frankfurt -> athens),
//      FATHOM_SHOTS_MESH (default), FATHOM_SHOTS_MIN_RUNS (throughput runs to wait for),
//      FATHOM_SHOTS_WAIT_S (how long to wait for them)
import type { Page } from '@playwright/test';

import { artifact, drawnData, env, expect, expectAccessible, seen, signInAtLogin, test } from './fixtures';

const sourceName = process.env.FATHOM_SHOTS_SOURCE ?? 'frankfurt';
const destinationName = process.env.FATHOM_SHOTS_DESTINATION ?? 'athens';
const mesh = process.env.FATHOM_SHOTS_MESH ?? 'default';
const minRuns = Number(process.env.FATHOM_SHOTS_MIN_RUNS ?? '4');
const waitS = Number(process.env.FATHOM_SHOTS_WAIT_S ?? '3600');

/** GET of the API with the page's session; throws with the status when it is not 200. */
async function api<T>(page: Page, path: string): Promise<T> {
  const response = await page.request.get(`/api/v1${path}`);
  if (!response.ok()) throw new Error(`GET ${path}: ${response.status()}`);
  return (await response.json()) as T;
}

/** What a poll of the path's history found: 'ready', or what is still missing. */
async function history(page: Page, source: string, destination: string): Promise<string> {
  const query = `source=${source}&destination=${destination}`;
  const analysis = await api<{ runs?: { rate_bps: number | null }[] }>(page, `/analysis/path/?${query}`);
  const runs = (analysis.runs ?? []).filter((run) => run.rate_bps !== null).length;
  const routes = await api<{ routes?: unknown[] }>(page, `/paths/routes/?${query}`);
  const traced = (routes.routes ?? []).length;
  console.error(`[shots] ${sourceName} -> ${destinationName}: ${runs} analysed runs, ${traced} routes`);
  return runs >= minRuns && traced >= 1 ? 'ready' : `only ${runs} runs and ${traced} routes`;
}

const panel = (page: Page, title: string) =>
  page.locator('section.panel', { has: page.getByRole('heading', { name: title }) });

test.use({ viewport: { width: 1400, height: 1000 }, failureShot: 'demo-shots-failure.png' });

test('the README screenshots from the demo', async ({ page }) => {
  // The demo's first throughput runs take most of an hour.
  test.setTimeout((waitS + 300) * 1000);
  env('FATHOM_ARTIFACTS');
  await signInAtLogin(page);
  const agents = await api<{ id: string; name: string }[]>(page, '/agents/');
  const idOf = (name: string) => {
    const agent = agents.find((item) => item.name === name);
    if (agent === undefined) throw new Error(`no agent named ${name}`);
    return agent.id;
  };
  const source = idOf(sourceName);
  const destination = idOf(destinationName);
  await expect
    .poll(() => history(page, source, destination), {
      timeout: waitS * 1000,
      intervals: [30_000],
      message: `${sourceName} -> ${destinationName} has ${minRuns} analysed runs and a route within ${waitS} s`,
    })
    .toBe('ready');

  await page.goto(`/paths/${source}/${destination}?range=24h`);
  const chart = page.locator('[data-testid="history-chart"].js-plotly-plot');
  await expect(chart).toBeVisible({ timeout: 30_000 });
  await drawnData(chart);
  await page.waitForTimeout(1000); // Plotly's last relayout
  await page.locator('section', { has: chart }).first().screenshot({ path: artifact('path-history.png') });
  const routes = panel(page, 'Routes');
  await expect(page.getByTestId('routes-summary')).toBeVisible({ timeout: 20_000 });
  await routes.scrollIntoViewIfNeeded();
  await routes.screenshot({ path: artifact('path-routes.png') });
  await expectAccessible(page, 'the path page');

  await page.goto('/paths');
  await expect(
    page.getByRole('link', { name: new RegExp(`${sourceName}\\s*→\\s*${destinationName}`) }).first(),
  ).toBeVisible({ timeout: 20_000 });
  await page.waitForTimeout(2000); // the sparklines of the rows shown
  await page.screenshot({ path: artifact('paths-list.png') });
  await expectAccessible(page, 'the Paths list');

  await page.goto(`/grid?mesh=${encodeURIComponent(mesh)}`);
  await expect(page.locator('td.grid-cell:not(.none)').first()).toBeVisible({ timeout: 20_000 });
  await page.screenshot({ path: artifact('analysis-grid-page.png'), fullPage: true });
  await expectAccessible(page, 'the grid');

  // A demo that has run for an hour may have no finding yet: the README keeps the lab's then.
  const findings = await api<unknown[]>(page, '/analysis/findings/?limit=1');
  if (findings.length > 0) {
    await page.goto('/findings?window=30d');
    await expect(page.locator('table tbody tr').first()).toBeVisible({ timeout: 20_000 });
    await page.screenshot({ path: artifact('findings-page.png') });
    await expectAccessible(page, 'the Findings page');
  } else {
    console.error('[shots] no findings yet: findings-page.png left as it was');
  }

  await page.goto('/schedule');
  const timeline = page.locator('.js-plotly-plot').first();
  await expect(timeline).toBeVisible({ timeout: 20_000 });
  await drawnData(timeline);
  await page.screenshot({ path: artifact('schedule-timeline.png') });
  await expectAccessible(page, 'the Schedule');
  await seen({ source, destination, shots: env('FATHOM_ARTIFACTS') });
});
