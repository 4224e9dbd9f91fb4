// What a NOC engineer sees of a perfSONAR node once it measures: its path page with the RTT
// chart and the failed runs (pScheduler's reason), the node's tasks on the Agents page, and
// a pSConfig template's dry-run report on the Meshes page.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_ARTIFACTS, FATHOM_NODE_NAME,
//      FATHOM_PATH_URL (the path page of the node's failed run), FATHOM_PSCONFIG_FILE, FATHOM_FAILED_REASON
import { join } from 'node:path';

import { drawnData, env, runCheck, showsPage, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const name = env('FATHOM_NODE_NAME');
await runCheck(artifacts, { width: 1500, height: 1000 }, 'perfsonar-views-failure.png', async (page) => {
  await page.goto(`${baseUrl}${env('FATHOM_PATH_URL')}`);
  await page.waitForURL(/\/login/, { timeout: 15000 });
  await signIn(page);
  await showsPage(page, /^\/paths\//);
  const chart = page.locator('[data-testid="history-chart"].js-plotly-plot');
  await chart.waitFor({ timeout: 20000 });
  await drawnData(chart);
  const failed = page.getByText(env('FATHOM_FAILED_REASON'), { exact: false }).first();
  await failed.waitFor({ timeout: 20000 });
  await page.screenshot({ path: join(artifacts, 'path-perfsonar-node.png'), fullPage: true });

  await page.goto(`${baseUrl}/agents`);
  const row = page.getByRole('row').filter({ hasText: name }).first();
  await row.waitFor({ timeout: 15000 });
  await row.getByRole('button', { name: /^Tasks/ }).click();
  await page.getByRole('table').filter({ hasText: 'throughput' }).first().waitFor({ timeout: 15000 });
  // The task whose POST answer the node lost, found by its reference and kept.
  await page.getByText('created by a POST that got no answer', { exact: false }).first().waitFor({ timeout: 15000 });
  await page.screenshot({ path: join(artifacts, 'agents-perfsonar-tasks.png'), fullPage: true });

  await page.goto(`${baseUrl}/meshes`);
  await page.getByRole('button', { name: 'Import pSConfig' }).click();
  const form = page.getByRole('form', { name: 'Import pSConfig' });
  await form.getByLabel('Template file').setInputFiles(env('FATHOM_PSCONFIG_FILE'));
  await form.getByRole('button', { name: 'Dry run' }).click();
  const report = page.getByText('latencybg', { exact: false }).first();
  await report.waitFor({ timeout: 15000 });
  await page.screenshot({ path: join(artifacts, 'meshes-psconfig-dry-run.png'), fullPage: true });
  console.log(JSON.stringify({ failedShown: true, reportShown: true }));
});
