// What the NOC does with an incident: find it in the top bar, open it, acknowledge it with a
// comment, silence its path from there, then resolve it. Saves screenshots of the list, of
// the incident before and after, and of the alerting settings.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_INCIDENT_TITLE, FATHOM_ARTIFACTS
import { artifact, env, expect, expectAccessible, seen, showsPage, signIn, test } from './fixtures';

test.use({ viewport: { width: 1400, height: 1000 }, failureShot: 'incident-failure.png' });

test('an incident acknowledged, silenced and resolved', async ({ page }) => {
  await page.goto('/incidents');
  await expect(page).toHaveURL(/\/login/);
  await signIn(page);
  await showsPage(page, /^\/incidents$/);
  const counter = page.locator('.topbar .count.open');
  await expect(counter).toBeVisible();
  const openCount = (await counter.textContent()) ?? '';
  const link = page.getByRole('link', { name: env('FATHOM_INCIDENT_TITLE') }).first();
  await expect(link).toBeVisible();
  await page.screenshot({ path: artifact('incidents-page.png'), fullPage: true });
  await expectAccessible(page, 'the Incidents list');
  await link.click();
  await showsPage(page, /^\/incidents\/\d+$/);
  await expect(page.getByRole('heading', { name: 'Timeline' })).toBeVisible();
  await page.screenshot({ path: artifact('incident-page.png'), fullPage: true });
  await expectAccessible(page, 'the incident page');

  const comment = page.getByLabel('Comment');
  await comment.fill('looking at the NIC on sys-b');
  await page.getByRole('button', { name: 'Acknowledge' }).click();
  await expect(page.getByText('acknowledged by', { exact: false })).toBeVisible();

  await comment.fill('maintenance on sys-b, ticket 42');
  await page.getByRole('button', { name: 'Silence from here' }).click();
  await expect(page.getByText('Silenced until', { exact: false })).toBeVisible();

  await comment.fill('NIC replaced');
  await page.getByRole('button', { name: 'Resolve' }).click();
  await expect(page.getByText('resolved', { exact: false }).first()).toBeVisible();
  await expect(page.getByText('NIC replaced', { exact: false })).toBeVisible();
  await page.screenshot({ path: artifact('incident-resolved.png'), fullPage: true });
  await expectAccessible(page, 'the resolved incident');
  const timeline = await page.locator('ol.timeline li').allTextContents();

  // The alerting settings: the rules, the silence made above, the channel that was paged.
  await page.goto('/alerts/settings');
  await expect(page.getByText('systest-hook (webhook)')).toBeVisible();
  await expect(page.getByText('maintenance on sys-b, ticket 42')).toBeVisible();
  await page.screenshot({ path: artifact('alert-settings.png'), fullPage: true });
  await expectAccessible(page, 'the alerting settings');
  await seen({ openCount, timeline, url: page.url() });
});
