// The Schedule page's timeline on lab-made slots: every agent of the mesh has a row, the
// bars of each state are drawn, and switching the window refetches and redraws. Saves
// schedule-timeline.png.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_AGENTS (comma-separated names that
//      must have a row), FATHOM_ARTIFACTS
import { artifact, env, expect, expectAccessible, seen, signInAtLogin, test } from './fixtures';

test.use({ viewport: { width: 1400, height: 900 }, failureShot: 'schedule-failure.png' });

test("the Schedule's timeline over an hour and a day", async ({ page }) => {
  await signInAtLogin(page);
  await page.goto('/schedule?window=3600');
  const chart = page.locator('[data-testid="slot-timeline"].js-plotly-plot');
  await expect(chart).toBeVisible({ timeout: 20_000 });
  // One <path> per bar in Plotly's bar layer; the y axis ticks are the agents' rows.
  const barPoints = chart.locator('g.barlayer g.point');
  await expect(barPoints.first()).toBeVisible({ timeout: 20_000 });
  const bars = await barPoints.count();
  const rows = await chart.locator('g.ytick text').allTextContents();
  const states = await chart.locator('g.legend text.legendtext').allTextContents();
  await page.screenshot({ path: artifact('schedule-timeline.png'), fullPage: false });
  await expectAccessible(page, 'the Schedule');
  const missing = env('FATHOM_AGENTS').split(',').filter((name) => !rows.includes(name));
  expect(missing, `agents without a timeline row (rows: ${rows.join(', ')})`).toEqual([]);

  await page.getByRole('button', { name: 'Last 24 h' }).click();
  await expect(page).toHaveURL(/window=86400/, { timeout: 10_000 });
  await expect(barPoints.first()).toBeVisible({ timeout: 20_000 });
  const barsDay = await barPoints.count();
  await seen({ bars, barsDay, rows, states, url: page.url() });
});
