// What a NOC engineer does first: sign in, open the path list, open one path and read its
// history chart (throughput, RTT percentiles and loss on one time axis). Drives Debian's
// chromium through playwright-core (no browser download is possible here). Exits non-zero
// with a reason when any step fails; saves screenshots either way.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_SOURCE_NAME, FATHOM_DESTINATION_NAME,
//      FATHOM_ARTIFACTS (directory for screenshots)
import { join } from 'node:path';

import { drawnData, env, runCheck, showsPage, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const source = env('FATHOM_SOURCE_NAME');
const destination = env('FATHOM_DESTINATION_NAME');
await runCheck(artifacts, { width: 1400, height: 900 }, 'failure.png', async (page) => {
  await page.goto(`${baseUrl}/paths`);
  // Not signed in: the app sends us to the login page.
  await page.waitForURL(/\/login/, { timeout: 15000 });
  await signIn(page);
  await showsPage(page, /^\/paths$/);
  const link = page.getByRole('link', { name: new RegExp(`${source}\\s*→\\s*${destination}`) });
  await link.first().waitFor({ timeout: 15000 });
  await page.screenshot({ path: join(artifacts, 'paths-page.png'), fullPage: true });
  await link.first().click();
  await showsPage(page, /^\/paths\/[0-9a-f-]+\/[0-9a-f-]+$/);

  // Plotly marks the chart's own container with .js-plotly-plot once it has drawn.
  const chart = page.locator('[data-testid="history-chart"].js-plotly-plot');
  await chart.waitFor({ timeout: 20000 });
  const points = await drawnData(chart);
  const traceNames = await chart.locator('g.legend text.legendtext').allTextContents();
  await page.screenshot({ path: join(artifacts, 'path-page.png'), fullPage: true });
  // One x axis under every row (one x title, four y titles): a zoom on any row zooms them all.
  const xAxes = await chart.locator('text.xtitle, text.x2title, text.x3title, text.x4title').count();
  const yAxes = await chart.locator('text.ytitle, text.y2title, text.y3title, text.y4title').count();

  // Another range, then a zoom (Plotly's relayout event, as a drag across a row emits it):
  // each lands in the URL, so a link shows the same view.
  await page.getByRole('button', { name: '7 days' }).click();
  await page.waitForURL(/range=7d/, { timeout: 10000 });
  await drawnData(chart);
  const plotTime = (msAgo) => new Date(Date.now() - msAgo).toISOString().slice(0, 19).replace('T', ' ');
  await chart.evaluate((gd, range) => {
    gd.emit('plotly_relayout', { 'xaxis.range[0]': range[0], 'xaxis.range[1]': range[1] });
    // Ending a minute ahead: the server reads up to its now, and a new path's data is seconds old.
  }, [plotTime(30 * 60 * 1000), plotTime(-60 * 1000)]);
  await page.waitForURL(/from=.*&to=/, { timeout: 10000 });
  const zoomedUrl = page.url();
  await page.goto(zoomedUrl);
  await chart.waitFor({ timeout: 20000 });
  const pressed = await page.getByRole('group', { name: 'Time range' }).locator('button[aria-pressed="true"]').count();

  // The custom range: a reversed one is refused on the spot; two UTC times in order land in
  // the URL and redraw the chart.
  const minuteText = (msAgo) => new Date(Date.now() - msAgo).toISOString().slice(0, 16);
  const custom = page.locator('form.custom-range');
  await custom.getByLabel('From (UTC)').fill(minuteText(0));
  await custom.getByLabel('to', { exact: true }).fill(minuteText(2 * 3600 * 1000));
  await custom.getByRole('button', { name: 'Show' }).click();
  const refusal = await custom.getByRole('alert').innerText({ timeout: 10000 });
  await custom.getByLabel('From (UTC)').fill(minuteText(2 * 3600 * 1000));
  await custom.getByLabel('to', { exact: true }).fill(minuteText(-60 * 1000));
  await custom.getByRole('button', { name: 'Show' }).click();
  await page.waitForURL((url) => url.toString() !== zoomedUrl && /from=.*&to=/.test(url.search), { timeout: 10000 });
  const customUrl = page.url();
  const customPoints = await drawnData(chart);
  console.log(
    JSON.stringify({ points, traceNames, xAxes, yAxes, zoomedUrl, pressed, refusal, customUrl, customPoints, url: page.url() }),
  );
  if (!traceNames.includes('RTT median')) throw new Error(`no RTT median in the legend: ${traceNames.join(', ')}`);
});
