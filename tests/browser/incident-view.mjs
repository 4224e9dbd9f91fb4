// Opens one incident's page as the NOC sees it and saves a screenshot: its alerts with the
// path's RTT chart at the time, the timeline and the messages sent.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_INCIDENT_ID, FATHOM_SHOT, FATHOM_ARTIFACTS
import { join } from 'node:path';

import { env, runCheck, showsPage, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const id = env('FATHOM_INCIDENT_ID');
const shot = env('FATHOM_SHOT');
await runCheck(artifacts, { width: 1400, height: 1200 }, `${shot}-failure.png`, async (page) => {
  await page.goto(`${baseUrl}/incidents/${id}`);
  await page.waitForURL(/\/login/, { timeout: 15000 });
  await signIn(page);
  await showsPage(page, new RegExp(`^/incidents/${id}$`));
  await page.getByRole('heading', { name: 'Timeline' }).waitFor({ timeout: 15000 });
  const charts = page.locator('[data-testid="alert-rtt-chart"].js-plotly-plot');
  await charts.first().waitFor({ timeout: 20000 });
  await page.screenshot({ path: join(artifacts, `${shot}.png`), fullPage: true });
  console.log(JSON.stringify({ charts: await charts.count(), url: page.url() }));
});
