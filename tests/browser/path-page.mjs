// What a NOC engineer does first: sign in, open the path list, open one path and read its
// history chart (throughput, RTT percentiles and loss on one time axis). Drives Debian's chromium through playwright-core (no browser download is possible
// here). Exits non-zero with a reason when any step fails; saves screenshots either way.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_SOURCE_NAME, FATHOM_DESTINATION_NAME,
//      FATHOM_ARTIFACTS (directory for screenshots)
import { join } from 'node:path';

import { drawnData, env, runCheck, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const source = env('FATHOM_SOURCE_NAME');
const destination = env('FATHOM_DESTINATION_NAME');
await runCheck(artifacts, { width: 1400, height: 900 }, 'failure.png', async (page) => {
  await page.goto(`${baseUrl}/paths`);
  // Not signed in: the app sends us to the login page.
  await page.waitForURL(/\/login/, { timeout: 15000 });
  await signIn(page);
  await page.waitForURL(/\/paths$/, { timeout: 15000 });
  const link = page.getByRole('link', { name: new RegExp(`${source}\\s*→\\s*${destination}`) });
  await link.first().waitFor({ timeout: 15000 });
  await page.screenshot({ path: join(artifacts, 'paths-page.png'), fullPage: true });
  await link.first().click();
  await page.waitForURL(/\/paths\/[0-9a-f-]+\/[0-9a-f-]+/, { timeout: 15000 });

  // Plotly marks the chart's own container with .js-plotly-plot once it has drawn.
  const chart = page.locator('[data-testid="history-chart"].js-plotly-plot');
  await chart.waitFor({ timeout: 20000 });
  const points = await drawnData(chart);
  const traceNames = await chart.locator('g.legend text.legendtext').allTextContents();
  await page.screenshot({ path: join(artifacts, 'path-page.png'), fullPage: true });
  console.log(JSON.stringify({ points, traceNames, url: page.url() }));
  if (!traceNames.includes('RTT median')) throw new Error(`no RTT median in the legend: ${traceNames.join(', ')}`);
});
