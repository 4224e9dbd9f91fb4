// What the NOC does with an incident: find it in the top bar, open it, acknowledge it with a
// comment, silence its path from there, then resolve it. Exits non-zero with a reason when
// any step fails; saves screenshots of the list, of the incident before and after, and of
// the alerting settings.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_INCIDENT_TITLE, FATHOM_ARTIFACTS
import { join } from 'node:path';

import { env, runCheck, showsPage, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const title = env('FATHOM_INCIDENT_TITLE');
await runCheck(artifacts, { width: 1400, height: 1000 }, 'incident-failure.png', async (page) => {
  await page.goto(`${baseUrl}/incidents`);
  await page.waitForURL(/\/login/, { timeout: 15000 });
  await signIn(page);
  await showsPage(page, /^\/incidents$/);
  const counter = page.locator('.topbar .count.open');
  await counter.waitFor({ timeout: 15000 });
  const openCount = (await counter.textContent()) ?? '';
  const link = page.getByRole('link', { name: title });
  await link.first().waitFor({ timeout: 15000 });
  await page.screenshot({ path: join(artifacts, 'incidents-page.png'), fullPage: true });
  await link.first().click();
  await showsPage(page, /^\/incidents\/\d+$/);
  await page.getByRole('heading', { name: 'Timeline' }).waitFor({ timeout: 15000 });
  await page.screenshot({ path: join(artifacts, 'incident-page.png'), fullPage: true });

  const comment = page.getByLabel('Comment');
  await comment.fill('looking at the NIC on sys-b');
  await page.getByRole('button', { name: 'Acknowledge' }).click();
  await page.getByText('acknowledged by', { exact: false }).waitFor({ timeout: 15000 });

  await comment.fill('maintenance on sys-b, ticket 42');
  await page.getByRole('button', { name: 'Silence from here' }).click();
  await page.getByText('Silenced until', { exact: false }).waitFor({ timeout: 15000 });

  await comment.fill('NIC replaced');
  await page.getByRole('button', { name: 'Resolve' }).click();
  await page.getByText('resolved', { exact: false }).first().waitFor({ timeout: 15000 });
  await page.getByText('NIC replaced', { exact: false }).waitFor({ timeout: 15000 });
  await page.screenshot({ path: join(artifacts, 'incident-resolved.png'), fullPage: true });
  const timeline = await page.locator('ol.timeline li').allTextContents();

  // The alerting settings: the rules, the silence made above, the channel that was paged.
  await page.goto(`${baseUrl}/alerts/settings`);
  await page.getByText('systest-hook (webhook)').waitFor({ timeout: 15000 });
  await page.getByText('maintenance on sys-b, ticket 42').waitFor({ timeout: 15000 });
  await page.screenshot({ path: join(artifacts, 'alert-settings.png'), fullPage: true });
  console.log(JSON.stringify({ openCount, timeline, url: page.url() }));
});
