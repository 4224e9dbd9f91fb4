// The Schedule page's timeline on lab-made slots: every agent of the mesh has a row, the
// bars of each state are drawn, and switching the window refetches and redraws. Exits
// non-zero with a reason when a step fails; saves schedule-timeline.png either way.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_AGENTS (comma-separated names that
//      must have a row), FATHOM_ARTIFACTS
import { join } from 'node:path';

import { env, runCheck, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const agents = env('FATHOM_AGENTS').split(',');
await runCheck(artifacts, { width: 1400, height: 900 }, 'schedule-failure.png', async (page) => {
  await page.goto(`${baseUrl}/login`);
  await signIn(page);
  await page.waitForURL((url) => !url.pathname.startsWith('/login'), { timeout: 15000 });
  await page.goto(`${baseUrl}/schedule?window=3600`);
  const chart = page.locator('[data-testid="slot-timeline"].js-plotly-plot');
  await chart.waitFor({ timeout: 20000 });
  // One <path> per bar in Plotly's bar layer; the y axis ticks are the agents' rows.
  await chart.locator('g.barlayer g.point').first().waitFor({ timeout: 20000 });
  const bars = await chart.locator('g.barlayer g.point').count();
  const rows = await chart.locator('g.ytick text').allTextContents();
  const states = await chart.locator('g.legend text.legendtext').allTextContents();
  await page.screenshot({ path: join(artifacts, 'schedule-timeline.png'), fullPage: false });
  const missing = agents.filter((name) => !rows.includes(name));
  if (missing.length) throw new Error(`no timeline row for ${missing.join(', ')} (rows: ${rows.join(', ')})`);

  await page.getByRole('button', { name: 'Last 24 h' }).click();
  await page.waitForURL(/window=86400/, { timeout: 10000 });
  await chart.locator('g.barlayer g.point').first().waitFor({ timeout: 20000 });
  const barsDay = await chart.locator('g.barlayer g.point').count();
  console.log(JSON.stringify({ bars, barsDay, rows, states, url: page.url() }));
});
