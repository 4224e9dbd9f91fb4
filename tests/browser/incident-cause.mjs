// Opens an incident whose degraded paths share a router and saves a screenshot of its head:
// the title and the "Where:" line that names the router and the evidence.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_INCIDENT_ID, FATHOM_ARTIFACTS
import { join } from 'node:path';

import { env, runCheck, showsPage, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const id = env('FATHOM_INCIDENT_ID');
await runCheck(artifacts, { width: 1400, height: 900 }, 'incident-cause-failure.png', async (page) => {
  await page.goto(`${baseUrl}/incidents/${id}`);
  await page.waitForURL(/\/login/, { timeout: 15000 });
  await signIn(page);
  await showsPage(page, new RegExp(`^/incidents/${id}$`));
  const cause = page.getByTestId('incident-cause');
  await cause.waitFor({ timeout: 15000 });
  await page.getByRole('heading', { name: 'Timeline' }).waitFor({ timeout: 15000 });
  await page.screenshot({ path: join(artifacts, 'incident-cause.png') });
  const heading = await page.getByRole('heading', { level: 1 }).textContent();
  console.log(JSON.stringify({ heading, cause: await cause.textContent() }));
});
