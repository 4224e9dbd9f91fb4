// Opens one incident's page as the NOC sees it and saves a screenshot: its alerts with the
// path's RTT chart at the time, the timeline and the messages sent.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_INCIDENT_ID, FATHOM_SHOT, FATHOM_ARTIFACTS
import { artifact, env, expect, expectAccessible, seen, showsPage, signIn, test } from './fixtures';

test.use({
  viewport: { width: 1400, height: 1200 },
  failureShot: `${process.env.FATHOM_SHOT ?? 'incident-view'}-failure.png`,
});

test("an incident's alerts with their RTT charts", async ({ page }) => {
  const id = env('FATHOM_INCIDENT_ID');
  await page.goto(`/incidents/${id}`);
  await expect(page).toHaveURL(/\/login/);
  await signIn(page);
  await showsPage(page, new RegExp(`^/incidents/${id}$`));
  await expect(page.getByRole('heading', { name: 'Timeline' })).toBeVisible();
  const charts = page.locator('[data-testid="alert-rtt-chart"].js-plotly-plot');
  await expect(charts.first()).toBeVisible({ timeout: 20_000 });
  await page.screenshot({ path: artifact(`${env('FATHOM_SHOT')}.png`), fullPage: true });
  await expectAccessible(page, 'the incident page');
  await seen({ charts: await charts.count(), url: page.url() });
});
