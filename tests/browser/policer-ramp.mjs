// A policed lab path's page after a paced UDP ramp measured its policer: the chart draws the
// ramp as its own marker kind, and the advice table gives the policer's rate with the ramp as
// its basis, and the capacity plan paces today's streams. Saves policer-ramp.png (the whole
// page), policer-advice.png and policer-plan.png.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_SOURCE_ID, FATHOM_DESTINATION_ID,
//      FATHOM_ARTIFACTS
import { join } from 'node:path';

import { drawnData, env, runCheck, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const path = `/paths/${env('FATHOM_SOURCE_ID')}/${env('FATHOM_DESTINATION_ID')}?range=1h`;
await runCheck(artifacts, { width: 1400, height: 1000 }, 'policer-ramp-failure.png', async (page) => {
  await page.goto(`${baseUrl}/login`);
  await signIn(page);
  await page.waitForURL((url) => !url.pathname.startsWith('/login'), { timeout: 15000 });
  await page.goto(`${baseUrl}${path}`);
  const chart = page.locator('[data-testid="history-chart"].js-plotly-plot');
  await chart.waitFor({ timeout: 20000 });
  await drawnData(chart);
  const legend = await chart.locator('g.legend text.legendtext').allTextContents();
  const advice = page.locator('table.advice');
  await advice.waitFor({ timeout: 20000 });
  const estimate = advice.locator('tr', { hasText: 'policer rate' });
  const estimateText = (await estimate.count()) ? await estimate.first().innerText() : '';
  const plan = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Capacity plan' }) });
  await plan.locator('dl.figures').waitFor({ timeout: 20000 });
  const planText = await plan.innerText();
  await page.screenshot({ path: join(artifacts, 'policer-ramp.png'), fullPage: true });
  await advice.screenshot({ path: join(artifacts, 'policer-advice.png') });
  await plan.screenshot({ path: join(artifacts, 'policer-plan.png') });
  console.log(JSON.stringify({ legend, estimateText, planText }));
});
