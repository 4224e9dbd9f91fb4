// What a NOC engineer reads after the mesh has run: one path's analysis (ceiling chart,
// what limits it, its RTT modes) and the mesh grid, switched to RTT and recoloured by
// thresholds the operator sets. Drives Debian's chromium through
// playwright-core. Exits non-zero with a reason when any step fails; screenshots either way.
//
// The mesh keeps measuring while the check runs, so a run can land between the caller's
// query and the page: the check reports what the limit panel shows (its newest run's start,
// label and ECMP member sentence) and the RTT mode rows, and the caller judges them against
// the runs and modes of that interval.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_SOURCE_ID, FATHOM_DESTINATION_ID,
//      FATHOM_MESH, FATHOM_ARTIFACTS (directory for screenshots)
import { join } from 'node:path';

import { env, runCheck, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
await runCheck(artifacts, { width: 1400, height: 1000 }, 'analysis-failure.png', async (page) => {
  await page.goto(`${baseUrl}/login`);
  await signIn(page);
  await page.waitForURL((url) => !url.pathname.startsWith('/login'), { timeout: 15000 });

  await page.goto(`${baseUrl}/paths/${env('FATHOM_SOURCE_ID')}/${env('FATHOM_DESTINATION_ID')}`);
  const chart = page.locator('[data-testid="ceiling-chart"].js-plotly-plot');
  await chart.waitFor({ timeout: 20000 });
  // Plotly draws one <path class="point"> per marker once the chart has data.
  await chart.locator('g.scatterlayer path.point').first().waitFor({ timeout: 20000 });
  const points = await chart.locator('g.scatterlayer path.point').count();
  const limits = page.getByRole('region', { name: 'What limits this path' });
  // "newest run 2026-12-01 14:35:52 UTC, 1 stream": the run summary has rendered.
  const summary = limits.getByText(/newest run \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/).first();
  await summary.waitFor({ timeout: 15000 });
  const limitText = await limits.innerText({ timeout: 15000 });
  const memberNotes = limits.getByRole('note').filter({ hasText: 'The newest run was on ECMP member' });
  const memberNote = (await memberNotes.count()) === 0 ? '' : await memberNotes.first().innerText({ timeout: 15000 });
  const modes = page.getByRole('region', { name: 'RTT modes' });
  await modes.locator('tbody tr').first().waitFor({ timeout: 15000 });
  const modeRows = await modes.locator('tbody tr').count();
  await page.screenshot({ path: join(artifacts, 'analysis-path-page.png'), fullPage: true });
  if (points < 1) throw new Error('the ceiling chart has no runs');

  await page.goto(`${baseUrl}/grid?mesh=${encodeURIComponent(env('FATHOM_MESH'))}`);
  // Cells of pairs the mesh measures (the diagonal and unmeasured pairs are .none).
  const cells = page.locator('td.grid-cell:not(.none)');
  await cells.first().waitFor({ timeout: 15000 });
  const cellCount = await cells.count();
  const ecmpMarkers = await page.locator('[data-testid="ecmp-marker"]').count();
  await page.screenshot({ path: join(artifacts, 'analysis-grid-page.png'), fullPage: true });
  if (cellCount < 1) throw new Error('the grid has no cells');

  // The metric switch: RTT medians, kept in the URL.
  await page.getByLabel('Metric').selectOption('rtt');
  await page.waitForURL(/metric=rtt/, { timeout: 10000 });
  // An RTT half reads "→8.1" (ms), maybe with its markers after; a fraction would read "→85%".
  const rttHalves = page.locator('a.half', { hasText: /[→←]\s*[\d.]+(?![\d.%])/ });
  await rttHalves.first().waitFor({ timeout: 15000 });
  const rttCells = await rttHalves.count();
  const badBefore = await page.locator('a.half.tone-bad').count();

  // Thresholds an operator sets recolour the grid: critical from 0.2 ms makes every measured
  // direction bad; resetting to the defaults (100 ms) makes them good again.
  await page.locator('details.grid-thresholds > summary').click();
  const form = page.getByRole('form', { name: `Grid thresholds of ${env('FATHOM_MESH')}` });
  await form.getByLabel('RTT median: warn from (ms)').fill('0.1');
  await form.getByLabel('RTT median: critical from (ms)').fill('0.2');
  await form.getByRole('button', { name: 'Save thresholds' }).click();
  await form.getByRole('status').waitFor({ timeout: 15000 });
  await page.locator('a.half.tone-bad').first().waitFor({ timeout: 15000 });
  const badStrict = await page.locator('a.half.tone-bad').count();
  await page.screenshot({ path: join(artifacts, 'analysis-grid-thresholds.png'), fullPage: true });
  await form.getByRole('button', { name: 'Reset to defaults' }).click();
  await page.waitForFunction(() => document.querySelectorAll('a.half.tone-bad').length === 0, null, { timeout: 15000 });
  const badAfterReset = await page.locator('a.half.tone-bad').count();
  console.log(
    JSON.stringify({
      points, modeRows, limitText, memberNote, cellCount, ecmpMarkers, rttCells, badBefore, badStrict, badAfterReset,
    }),
  );
});
