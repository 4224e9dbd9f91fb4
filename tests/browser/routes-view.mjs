// The path page's Routes panel on a lab path with ECMP: both members are listed, and the
// side-by-side diff of the two shows where they part ways. Saves path-routes.png.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_SOURCE_ID, FATHOM_DESTINATION_ID,
//      FATHOM_ARTIFACTS
import { join } from 'node:path';

import { env, runCheck, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const path = `/paths/${env('FATHOM_SOURCE_ID')}/${env('FATHOM_DESTINATION_ID')}?range=1h`;
await runCheck(artifacts, { width: 1400, height: 1000 }, 'routes-failure.png', async (page) => {
  await page.goto(`${baseUrl}/login`);
  await signIn(page);
  await page.waitForURL((url) => !url.pathname.startsWith('/login'), { timeout: 15000 });
  await page.goto(`${baseUrl}${path}`);
  const summary = page.getByTestId('routes-summary');
  await summary.waitFor({ timeout: 20000 });
  const summaryText = await summary.textContent();
  const options = await page.getByLabel('beside').locator('option').allTextContents();
  // The two routes the newest run took are preselected; their diff rows say where they differ.
  const diff = page.getByTestId('route-diff');
  await diff.waitFor({ timeout: 10000 });
  const diffSummary = await page.getByTestId('route-diff-summary').textContent();
  const differing = await diff.locator('tr.differs').count();
  const timeline = await page.locator('[data-testid="route-timeline"].js-plotly-plot').count();
  const panel = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Routes' }) });
  await panel.scrollIntoViewIfNeeded();
  await panel.screenshot({ path: join(artifacts, 'path-routes.png') });
  console.log(JSON.stringify({ summaryText, options, diffSummary, differing, timeline }));
});
