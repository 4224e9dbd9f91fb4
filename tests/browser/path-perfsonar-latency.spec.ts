// A perfSONAR node's latencybg reports on the page of its path towards a Fathom agent: the one-way
// rows (median with its min–p90 band, loss) join the path's history, forward only (OWAMP measures
// one way). Reads what the chart drew from Plotly's own data. Saves path-perfsonar-latency.png.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_ARTIFACTS, FATHOM_PATH_URL (the node's path
//      page), FATHOM_FORWARD ("<node> → <agent>"), FATHOM_REVERSE ("<agent> → <node>"),
//      FATHOM_EXPECTED_P50_MS (the reports' one-way median)
import { artifact, drawnData, env, expect, expectAccessible, seen, showsPage, signIn, test } from './fixtures';

interface Trace {
  name?: string;
  y?: (number | null)[];
}

interface PlotlyElement extends HTMLElement {
  data: Trace[];
}

test.use({ viewport: { width: 1500, height: 1300 }, failureShot: 'path-perfsonar-latency-failure.png' });

test("a perfSONAR node's one-way delay and loss on its path page", async ({ page }) => {
  const forward = env('FATHOM_FORWARD');
  const reverse = env('FATHOM_REVERSE');
  const median = `${forward} one-way median`;
  await page.goto(env('FATHOM_PATH_URL'));
  await expect(page).toHaveURL(/\/login/);
  await signIn(page);
  await showsPage(page, /^\/paths\//);
  const chart = page.locator('[data-testid="history-chart"].js-plotly-plot');
  await expect(chart).toBeVisible({ timeout: 20_000 });
  await drawnData(chart);
  // The latency series may come after the history: the rows join the chart when it does.
  const legendTexts = () => chart.locator('g.legend text.legendtext').allTextContents();
  await expect.poll(legendTexts, { timeout: 30_000, message: `the legend never named "${median}"` }).toContain(median);
  await expect(chart.locator('text.y7title')).toHaveText('one-way (ms)');
  await expect(page.getByText('The bottom rows are the latency test', { exact: false })).toBeVisible();

  const values = (name: string) =>
    chart.evaluate(
      (root, wanted) =>
        (root as PlotlyElement).data
          .filter((trace) => trace.name === wanted)
          .flatMap((trace) => trace.y ?? [])
          .filter((value): value is number => value !== null),
      name,
    );
  const medians = await values(median);
  const lossPercents = await values(`${forward} loss`);
  const reverseMedians = await values(`${reverse} one-way median`);
  const expected = Number(env('FATHOM_EXPECTED_P50_MS'));
  expect(medians.length, 'the forward median drew no point').toBeGreaterThan(0);
  for (const value of medians) expect(value).toBeCloseTo(expected, 6);

  // The headline figures beside the RTT ones: forward only, as OWAMP measures.
  const oneWayMedian = await page.getByTestId('one-way-median').textContent();
  const oneWayLoss = await page.getByTestId('one-way-loss').textContent();

  const legend = await legendTexts();
  await chart.scrollIntoViewIfNeeded();
  await page.screenshot({ path: artifact('path-perfsonar-latency.png'), fullPage: true });
  await expectAccessible(page, "the node's path page with its one-way rows");
  await seen({ legend, medians, lossPercents, reverseMedians, oneWayMedian, oneWayLoss });
});
