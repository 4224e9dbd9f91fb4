// The path page's Routes panel on a lab path with ECMP: both members are listed, and the
// side-by-side diff of the two shows where they part ways. Saves path-routes.png.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_SOURCE_ID, FATHOM_DESTINATION_ID,
//      FATHOM_ARTIFACTS
import { artifact, env, expect, expectAccessible, seen, signInAtLogin, test } from './fixtures';

test.use({ viewport: { width: 1400, height: 1000 }, failureShot: 'routes-failure.png' });

test("an ECMP path's routes and their diff", async ({ page }) => {
  await signInAtLogin(page);
  await page.goto(`/paths/${env('FATHOM_SOURCE_ID')}/${env('FATHOM_DESTINATION_ID')}?range=1h`);
  const summary = page.getByTestId('routes-summary');
  await expect(summary).toBeVisible({ timeout: 20_000 });
  const summaryText = await summary.textContent();
  const options = await page.getByLabel('beside').locator('option').allTextContents();
  // The two routes the newest run took are preselected; their diff rows say where they differ.
  const diff = page.getByTestId('route-diff');
  await expect(diff).toBeVisible({ timeout: 10_000 });
  const diffSummary = await page.getByTestId('route-diff-summary').textContent();
  const differing = await diff.locator('tr.differs').count();
  const timeline = await page.locator('[data-testid="route-timeline"].js-plotly-plot').count();
  const panel = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Routes' }) });
  await panel.scrollIntoViewIfNeeded();
  await panel.screenshot({ path: artifact('path-routes.png') });
  await expectAccessible(page, 'the path page with its routes');
  await seen({ summaryText, options, diffSummary, differing, timeline });
});
