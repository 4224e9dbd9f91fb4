// What a NOC engineer sees of a perfSONAR node once it measures: its path page with the RTT
// chart and the failed runs (pScheduler's reason), the node's tasks on the Agents page, and
// a pSConfig template's dry-run report on the Meshes page.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_ARTIFACTS, FATHOM_NODE_NAME,
//      FATHOM_PATH_URL (the path page of the node's failed run), FATHOM_PSCONFIG_FILE, FATHOM_FAILED_REASON
import { artifact, drawnData, env, expect, expectAccessible, seen, showsPage, signIn, test } from './fixtures';

test.use({ viewport: { width: 1500, height: 1000 }, failureShot: 'perfsonar-views-failure.png' });

test("a perfSONAR node's path, tasks and a pSConfig dry run", async ({ page }) => {
  await page.goto(env('FATHOM_PATH_URL'));
  await expect(page).toHaveURL(/\/login/);
  await signIn(page);
  await showsPage(page, /^\/paths\//);
  const chart = page.locator('[data-testid="history-chart"].js-plotly-plot');
  await expect(chart).toBeVisible({ timeout: 20_000 });
  await drawnData(chart);
  await expect(page.getByText(env('FATHOM_FAILED_REASON'), { exact: false }).first()).toBeVisible({ timeout: 20_000 });
  await page.screenshot({ path: artifact('path-perfsonar-node.png'), fullPage: true });
  await expectAccessible(page, "the node's path page");

  await page.goto('/agents');
  const row = page.getByRole('row').filter({ hasText: env('FATHOM_NODE_NAME') }).first();
  await expect(row).toBeVisible();
  await row.getByRole('button', { name: /^Tasks/ }).click();
  await expect(page.getByRole('table').filter({ hasText: 'throughput' }).first()).toBeVisible();
  // The task whose POST answer the node lost, found by its reference and kept.
  await expect(page.getByText('created by a POST that got no answer', { exact: false }).first()).toBeVisible();
  await page.screenshot({ path: artifact('agents-perfsonar-tasks.png'), fullPage: true });
  await expectAccessible(page, "the Agents page with the node's tasks");

  await page.goto('/meshes');
  await page.getByRole('button', { name: 'Import pSConfig' }).click();
  const form = page.getByRole('form', { name: 'Import pSConfig' });
  await form.getByLabel('Template file').setInputFiles(env('FATHOM_PSCONFIG_FILE'));
  await form.getByRole('button', { name: 'Dry run' }).click();
  await expect(page.getByText('latencybg', { exact: false }).first()).toBeVisible();
  await page.screenshot({ path: artifact('meshes-psconfig-dry-run.png'), fullPage: true });
  await expectAccessible(page, 'the Meshes page with a pSConfig dry run');
  await seen({ failedShown: true, reportShown: true });
});
