// External targets (a list mesh's hosts without an agent): the Paths page lists the agent ->
// target row under the agent paths, and its link opens the target's page with RTT drawn and
// its recent runs listed. Saves target-page.png.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_ARTIFACTS, FATHOM_SOURCE_NAME,
//      FATHOM_TARGET (the target as the mesh names it)
import { artifact, drawnData, env, expect, expectAccessible, seen, showsPage, signInAtLogin, test } from './fixtures';

test.use({ viewport: { width: 1400, height: 1000 }, failureShot: 'target-failure.png' });

test("a target's row on the Paths page and its own page", async ({ page }) => {
  await signInAtLogin(page);
  await page.goto('/paths');
  const targets = page.locator('section[aria-labelledby="targets-heading"]');
  const escaped = env('FATHOM_TARGET').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const name = new RegExp(`${env('FATHOM_SOURCE_NAME')}\\s*→\\s*${escaped}`);
  // `has` is matched inside each row, so its locator starts from the page, not the section.
  const row = targets.locator('tr', { has: page.getByRole('link', { name }) });
  await expect(row).toBeVisible({ timeout: 20_000 });
  const rowText = await row.innerText();
  await expectAccessible(page, 'the Paths list with its targets');
  await row.getByRole('link', { name }).click();
  await showsPage(page, /^\/targets\/[0-9a-f-]+\//);
  // The router changes the URL before the target's page replaces the Paths page (a CI run
  // read the Paths heading), so wait for the heading that names the target.
  const heading = await page.getByRole('heading', { level: 1, name: new RegExp(escaped) }).innerText();
  const chart = page.locator('[data-testid="target-rtt-chart"].js-plotly-plot');
  await expect(chart).toBeVisible({ timeout: 20_000 });
  const points = await drawnData(chart);
  const runs = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Recent runs' }) });
  await expect(runs.locator('tbody tr').first()).toBeVisible();
  const runRows = await runs.locator('tbody tr').count();
  await page.screenshot({ path: artifact('target-page.png'), fullPage: true });
  await expectAccessible(page, "the target's page");
  await seen({ rowText, heading, points, runRows, url: page.url() });
});
