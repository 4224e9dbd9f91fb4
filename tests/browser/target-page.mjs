// External targets (a list mesh's hosts without an agent): the Paths page lists the agent ->
// target row under the agent paths, and its link opens the target's page with RTT drawn and
// its recent runs listed. Saves target-page.png.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_ARTIFACTS, FATHOM_SOURCE_NAME,
//      FATHOM_TARGET (the target as the mesh names it)
import { join } from 'node:path';

import { drawnData, env, runCheck, showsPage, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const source = env('FATHOM_SOURCE_NAME');
const target = env('FATHOM_TARGET');
await runCheck(artifacts, { width: 1400, height: 1000 }, 'target-failure.png', async (page) => {
  await page.goto(`${baseUrl}/login`);
  await signIn(page);
  await page.waitForURL((url) => !url.pathname.startsWith('/login'), { timeout: 15000 });
  await page.goto(`${baseUrl}/paths`);
  const targets = page.locator('section[aria-labelledby="targets-heading"]');
  const escaped = target.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const name = new RegExp(`${source}\\s*→\\s*${escaped}`);
  // `has` is matched inside each row, so its locator starts from the page, not the section.
  const row = targets.locator('tr', { has: page.getByRole('link', { name }) });
  await row.waitFor({ timeout: 20000 });
  const rowText = await row.innerText();
  await row.getByRole('link', { name }).click();
  await showsPage(page, /^\/targets\/[0-9a-f-]+\//);
  // The router changes the URL before the target's page replaces the Paths page (a CI run
  // read the Paths heading), so wait for the heading that names the target.
  const heading = await page
    .getByRole('heading', { level: 1, name: new RegExp(escaped) })
    .innerText({ timeout: 15000 });
  const chart = page.locator('[data-testid="target-rtt-chart"].js-plotly-plot');
  await chart.waitFor({ timeout: 20000 });
  const points = await drawnData(chart);
  const runs = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Recent runs' }) });
  await runs.locator('tbody tr').first().waitFor({ timeout: 15000 });
  const runRows = await runs.locator('tbody tr').count();
  await page.screenshot({ path: join(artifacts, 'target-page.png'), fullPage: true });
  console.log(JSON.stringify({ rowText, heading, points, runRows, url: page.url() }));
});
