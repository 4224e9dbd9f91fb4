// The README's screenshots, from `make demo`'s own data (deploy/demo-screenshots.sh runs the
// demo and then this). Waits until the demo's ECMP path has enough history to show, then
// photographs the path page's history chart and routes, the Paths list, the grid, the
// Findings page (when there is a finding) and the Schedule. Exits non-zero with a reason
// when a view does not render.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_ARTIFACTS (where the PNGs go),
//      FATHOM_SHOTS_SOURCE / FATHOM_SHOTS_DESTINATION (agent names; frankfurt -> athens),
//      FATHOM_SHOTS_MESH (default), FATHOM_SHOTS_MIN_RUNS (throughput runs to wait for),
//      FATHOM_SHOTS_WAIT_S (how long to wait for them)
import { join } from 'node:path';

import { drawnData, env, runCheck, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const sourceName = process.env.FATHOM_SHOTS_SOURCE ?? 'frankfurt';
const destinationName = process.env.FATHOM_SHOTS_DESTINATION ?? 'athens';
const mesh = process.env.FATHOM_SHOTS_MESH ?? 'default';
const minRuns = Number(process.env.FATHOM_SHOTS_MIN_RUNS ?? '4');
const waitS = Number(process.env.FATHOM_SHOTS_WAIT_S ?? '3600');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** GET of the API with the page's session; throws with the status when it is not 200. */
async function api(page, path) {
  const response = await page.request.get(`${baseUrl}/api/v1${path}`);
  if (!response.ok()) throw new Error(`GET ${path}: ${response.status()}`);
  return response.json();
}

/** Polls until the path has minRuns analysed throughput runs and a trace; logs progress. */
async function waitForHistory(page, source, destination) {
  const query = `source=${source}&destination=${destination}`;
  const deadline = Date.now() + waitS * 1000;
  for (;;) {
    const analysis = await api(page, `/analysis/path/?${query}`);
    const runs = (analysis.runs ?? []).filter((run) => run.rate_bps !== null).length;
    const routes = await api(page, `/paths/routes/?${query}`);
    const traced = (routes.routes ?? []).length;
    console.error(`[shots] ${sourceName} -> ${destinationName}: ${runs} analysed runs, ${traced} routes`);
    if (runs >= minRuns && traced >= 1) return;
    if (Date.now() > deadline) throw new Error(`after ${waitS} s only ${runs} runs and ${traced} routes`);
    await sleep(30000);
  }
}

const panel = (page, title) => page.locator('section.panel', { has: page.getByRole('heading', { name: title }) });

await runCheck(artifacts, { width: 1400, height: 1000 }, 'demo-shots-failure.png', async (page) => {
  await page.goto(`${baseUrl}/login`);
  await signIn(page);
  await page.waitForURL((url) => !url.pathname.startsWith('/login'), { timeout: 15000 });
  const agents = await api(page, '/agents/');
  const idOf = (name) => {
    const agent = agents.find((item) => item.name === name);
    if (agent === undefined) throw new Error(`no agent named ${name}`);
    return agent.id;
  };
  const source = idOf(sourceName);
  const destination = idOf(destinationName);
  await waitForHistory(page, source, destination);

  await page.goto(`${baseUrl}/paths/${source}/${destination}?range=24h`);
  const chart = page.locator('[data-testid="history-chart"].js-plotly-plot');
  await chart.waitFor({ timeout: 30000 });
  await drawnData(chart);
  await sleep(1000); // Plotly's last relayout
  const history = page.locator('section', { has: chart }).first();
  await history.screenshot({ path: join(artifacts, 'path-history.png') });
  const routes = panel(page, 'Routes');
  await page.getByTestId('routes-summary').waitFor({ timeout: 20000 });
  await routes.scrollIntoViewIfNeeded();
  await routes.screenshot({ path: join(artifacts, 'path-routes.png') });

  await page.goto(`${baseUrl}/paths`);
  await page.getByRole('link', { name: new RegExp(`${sourceName}\\s*→\\s*${destinationName}`) }).first()
    .waitFor({ timeout: 20000 });
  await sleep(2000); // the sparklines of the rows shown
  await page.screenshot({ path: join(artifacts, 'paths-list.png') });

  await page.goto(`${baseUrl}/grid?mesh=${encodeURIComponent(mesh)}`);
  await page.locator('td.grid-cell:not(.none)').first().waitFor({ timeout: 20000 });
  await page.screenshot({ path: join(artifacts, 'analysis-grid-page.png'), fullPage: true });

  // A demo that has run for an hour may have no finding yet: the README keeps the lab's then.
  const findings = await api(page, '/analysis/findings/?limit=1');
  if (findings.length > 0) {
    await page.goto(`${baseUrl}/findings?window=30d`);
    await page.locator('table tbody tr').first().waitFor({ timeout: 20000 });
    await page.screenshot({ path: join(artifacts, 'findings-page.png') });
  } else {
    console.error('[shots] no findings yet: findings-page.png left as it was');
  }

  await page.goto(`${baseUrl}/schedule`);
  const timeline = page.locator('.js-plotly-plot').first();
  await timeline.waitFor({ timeout: 20000 });
  await drawnData(timeline);
  await page.screenshot({ path: join(artifacts, 'schedule-timeline.png') });
  console.log(JSON.stringify({ source, destination, shots: artifacts }));
});
