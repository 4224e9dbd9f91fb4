// What a NOC engineer reads after the mesh has run: one path's analysis (ceiling chart,
// what limits it, its RTT modes) and the mesh grid, switched to RTT and recoloured by
// thresholds the operator sets.
//
// The mesh keeps measuring while the check runs, so a run can land between the caller's
// query and the page: the check reports what the limit panel shows (its newest run's start,
// label and ECMP member sentence) and the RTT mode rows, and the caller judges them against
// the runs and modes of that interval.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_SOURCE_ID, FATHOM_DESTINATION_ID,
//      FATHOM_MESH, FATHOM_ARTIFACTS (directory for screenshots)
import { artifact, env, expect, expectAccessible, seen, signInAtLogin, test } from './fixtures';

test.use({ viewport: { width: 1400, height: 1000 }, failureShot: 'analysis-failure.png' });

test('a path analysis and the mesh grid with thresholds', async ({ page }) => {
  const mesh = env('FATHOM_MESH');
  await signInAtLogin(page);

  await page.goto(`/paths/${env('FATHOM_SOURCE_ID')}/${env('FATHOM_DESTINATION_ID')}`);
  const chart = page.locator('[data-testid="ceiling-chart"].js-plotly-plot');
  await expect(chart).toBeVisible({ timeout: 20_000 });
  // Plotly draws one <path class="point"> per marker once the chart has data.
  const markers = chart.locator('g.scatterlayer path.point');
  await expect(markers.first()).toBeVisible({ timeout: 20_000 });
  const points = await markers.count();
  const limits = page.getByRole('region', { name: 'What limits this path' });
  // "newest run 2026-12-01 14:35:52 UTC, 1 stream": the run summary has rendered.
  await expect(limits.getByText(/newest run \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/).first()).toBeVisible();
  const limitText = await limits.innerText();
  const memberNotes = limits.getByRole('note').filter({ hasText: 'The newest run was on ECMP member' });
  const memberNote = (await memberNotes.count()) === 0 ? '' : await memberNotes.first().innerText();
  const modes = page.getByRole('region', { name: 'RTT modes' });
  await expect(modes.locator('tbody tr').first()).toBeVisible();
  const modeRows = await modes.locator('tbody tr').count();
  await page.screenshot({ path: artifact('analysis-path-page.png'), fullPage: true });
  expect(points, 'the ceiling chart has no runs').toBeGreaterThanOrEqual(1);
  await expectAccessible(page, 'the path page');

  await page.goto(`/grid?mesh=${encodeURIComponent(mesh)}`);
  // Cells of pairs the mesh measures (the diagonal and unmeasured pairs are .none).
  const cells = page.locator('td.grid-cell:not(.none)');
  await expect(cells.first()).toBeVisible();
  const cellCount = await cells.count();
  const ecmpMarkers = await page.getByTestId('ecmp-marker').count();
  await page.screenshot({ path: artifact('analysis-grid-page.png'), fullPage: true });
  expect(cellCount, 'the grid has no cells').toBeGreaterThanOrEqual(1);
  await expectAccessible(page, 'the grid');

  // The metric switch: RTT medians, kept in the URL.
  await page.getByLabel('Metric').selectOption('rtt');
  await expect(page).toHaveURL(/metric=rtt/, { timeout: 10_000 });
  // An RTT half reads "→8.1" (ms), maybe with its markers after; a fraction would read "→85%".
  const rttHalves = page.locator('a.half', { hasText: /[→←]\s*[\d.]+(?![\d.%])/ });
  await expect(rttHalves.first()).toBeVisible();
  const rttCells = await rttHalves.count();
  const bad = page.locator('a.half.tone-bad');
  const badBefore = await bad.count();

  // Thresholds an operator sets recolour the grid: critical from 0.2 ms makes every measured
  // direction bad; resetting to the defaults (100 ms) makes them good again.
  await page.locator('details.grid-thresholds > summary').click();
  const form = page.getByRole('form', { name: `Grid thresholds of ${mesh}` });
  await form.getByLabel('RTT median: warn from (ms)').fill('0.1');
  await form.getByLabel('RTT median: critical from (ms)').fill('0.2');
  await form.getByRole('button', { name: 'Save thresholds' }).click();
  await expect(form.getByRole('status')).toBeVisible();
  await expect(bad.first()).toBeVisible();
  const badStrict = await bad.count();
  await page.screenshot({ path: artifact('analysis-grid-thresholds.png'), fullPage: true });
  await expectAccessible(page, 'the grid with its thresholds form open');
  await form.getByRole('button', { name: 'Reset to defaults' }).click();
  await expect(bad).toHaveCount(0);
  const badAfterReset = await bad.count();
  await seen({
    points, modeRows, limitText, memberNote, cellCount, ecmpMarkers, rttCells, badBefore, badStrict, badAfterReset,
  });
});
