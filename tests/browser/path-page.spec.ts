// What a NOC engineer does first: sign in, open the path list, open one path and read its
// history chart (throughput, RTT percentiles and loss on one time axis), then change its
// range: a button, a zoom, a custom range. Saves screenshots of the list and the path.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_SOURCE_NAME, FATHOM_DESTINATION_NAME,
//      FATHOM_ARTIFACTS (directory for screenshots)
import { artifact, drawnData, env, expect, expectAccessible, seen, showsPage, signIn, test } from './fixtures';

interface PlotlyElement extends HTMLElement {
  emit: (event: string, data: Record<string, string>) => void;
}

test.use({ viewport: { width: 1400, height: 900 }, failureShot: 'failure.png' });

test("a path's history chart and its ranges", async ({ page }) => {
  await page.goto('/paths');
  // Not signed in: the app sends us to the login page.
  await expect(page).toHaveURL(/\/login/);
  await expectAccessible(page, 'the login page');
  await signIn(page);
  await showsPage(page, /^\/paths$/);
  const link = page.getByRole('link', {
    name: new RegExp(`${env('FATHOM_SOURCE_NAME')}\\s*→\\s*${env('FATHOM_DESTINATION_NAME')}`),
  }).first();
  await expect(link).toBeVisible();
  await page.screenshot({ path: artifact('paths-page.png'), fullPage: true });
  await expectAccessible(page, 'the Paths list');
  await link.click();
  await showsPage(page, /^\/paths\/[0-9a-f-]+\/[0-9a-f-]+$/);

  // Plotly marks the chart's own container with .js-plotly-plot once it has drawn.
  const chart = page.locator('[data-testid="history-chart"].js-plotly-plot');
  await expect(chart).toBeVisible({ timeout: 20_000 });
  const points = await drawnData(chart);
  const traceNames = await chart.locator('g.legend text.legendtext').allTextContents();
  await page.screenshot({ path: artifact('path-page.png'), fullPage: true });
  await expectAccessible(page, 'the path page');
  // One x axis under every row (one x title, four y titles): a zoom on any row zooms them all.
  const xAxes = await chart.locator('text.xtitle, text.x2title, text.x3title, text.x4title').count();
  const yAxes = await chart.locator('text.ytitle, text.y2title, text.y3title, text.y4title').count();

  // Another range, then a zoom (Plotly's relayout event, as a drag across a row emits it):
  // each lands in the URL, so a link shows the same view.
  await page.getByRole('button', { name: '7 days' }).click();
  await expect(page).toHaveURL(/range=7d/, { timeout: 10_000 });
  await drawnData(chart);
  const plotTime = (msAgo: number) => new Date(Date.now() - msAgo).toISOString().slice(0, 19).replace('T', ' ');
  // Ending a minute ahead: the server reads up to its now, and a new path's data is seconds old.
  await chart.evaluate(
    (root, range) => {
      (root as PlotlyElement).emit('plotly_relayout', { 'xaxis.range[0]': range.from, 'xaxis.range[1]': range.to });
    },
    { from: plotTime(30 * 60 * 1000), to: plotTime(-60 * 1000) },
  );
  await expect(page).toHaveURL(/from=.*&to=/, { timeout: 10_000 });
  const zoomedUrl = page.url();
  await page.goto(zoomedUrl);
  await expect(chart).toBeVisible({ timeout: 20_000 });
  const pressed = await page.getByRole('group', { name: 'Time range' }).locator('button[aria-pressed="true"]').count();

  // The custom range: a reversed one is refused on the spot; two UTC times in order land in
  // the URL and redraw the chart.
  const minuteText = (msAgo: number) => new Date(Date.now() - msAgo).toISOString().slice(0, 16);
  const custom = page.locator('form.custom-range');
  await custom.getByLabel('From (UTC)').fill(minuteText(0));
  await custom.getByLabel('to', { exact: true }).fill(minuteText(2 * 3600 * 1000));
  await custom.getByRole('button', { name: 'Show' }).click();
  const refusal = await custom.getByRole('alert').innerText({ timeout: 10_000 });
  await expectAccessible(page, 'the path page refusing a reversed range');
  await custom.getByLabel('From (UTC)').fill(minuteText(2 * 3600 * 1000));
  await custom.getByLabel('to', { exact: true }).fill(minuteText(-60 * 1000));
  await custom.getByRole('button', { name: 'Show' }).click();
  await expect(page).toHaveURL((url) => url.toString() !== zoomedUrl && /from=.*&to=/.test(url.search), {
    timeout: 10_000,
  });
  const customUrl = page.url();
  const customPoints = await drawnData(chart);
  await seen({ points, traceNames, xAxes, yAxes, zoomedUrl, pressed, refusal, customUrl, customPoints, url: page.url() });
  expect(traceNames, 'the legend names the RTT median').toContain('RTT median');
});
