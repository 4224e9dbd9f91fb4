// A policed lab path's page after a paced UDP ramp measured its policer: the chart draws the
// ramp as its own marker kind, and the advice table gives the policer's rate with the ramp as
// its basis, and the capacity plan paces today's streams; "What limits this path" says what
// one stream against several showed, once a streams probe ran. Saves policer-ramp.png (the
// whole page), policer-advice.png, policer-plan.png and policer-limits.png.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_SOURCE_ID, FATHOM_DESTINATION_ID,
//      FATHOM_ARTIFACTS
import { artifact, drawnData, env, expect, expectAccessible, seen, signInAtLogin, test } from './fixtures';

test.use({ viewport: { width: 1400, height: 1000 }, failureShot: 'policer-ramp-failure.png' });

test("a policed path's ramp, advice and capacity plan", async ({ page }) => {
  await signInAtLogin(page);
  await page.goto(`/paths/${env('FATHOM_SOURCE_ID')}/${env('FATHOM_DESTINATION_ID')}?range=1h`);
  const chart = page.locator('[data-testid="history-chart"].js-plotly-plot');
  await expect(chart).toBeVisible({ timeout: 20_000 });
  await drawnData(chart);
  const legend = await chart.locator('g.legend text.legendtext').allTextContents();
  const advice = page.locator('table.advice');
  await expect(advice).toBeVisible({ timeout: 20_000 });
  const estimate = advice.locator('tr', { hasText: 'policer rate' });
  const estimateText = (await estimate.count()) ? await estimate.first().innerText() : '';
  const plan = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Capacity plan' }) });
  await expect(plan.locator('dl.figures')).toBeVisible({ timeout: 20_000 });
  const planText = await plan.innerText();
  const limits = page.locator('section.panel', { has: page.getByRole('heading', { name: 'What limits this path' }) });
  const probe = limits.locator('p.streams-probe');
  const streamsText = (await probe.count()) ? await probe.innerText() : '';
  await page.screenshot({ path: artifact('policer-ramp.png'), fullPage: true });
  await advice.screenshot({ path: artifact('policer-advice.png') });
  await plan.screenshot({ path: artifact('policer-plan.png') });
  await limits.screenshot({ path: artifact('policer-limits.png') });
  await expectAccessible(page, 'the policed path page');
  await seen({ legend, estimateText, planText, streamsText });
});
