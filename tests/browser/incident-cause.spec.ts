// Opens an incident whose degraded paths share a router and saves a screenshot of its head:
// the title and the "Where:" line that names the router and the evidence.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_INCIDENT_ID, FATHOM_ARTIFACTS
import { artifact, env, expect, expectAccessible, seen, showsPage, signIn, test } from './fixtures';

test.use({ viewport: { width: 1400, height: 900 }, failureShot: 'incident-cause-failure.png' });

test("an incident's page names the shared cause", async ({ page }) => {
  const id = env('FATHOM_INCIDENT_ID');
  await page.goto(`/incidents/${id}`);
  await expect(page).toHaveURL(/\/login/);
  await signIn(page);
  await showsPage(page, new RegExp(`^/incidents/${id}$`));
  const cause = page.getByTestId('incident-cause');
  await expect(cause).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Timeline' })).toBeVisible();
  await page.screenshot({ path: artifact('incident-cause.png') });
  await expectAccessible(page, 'the incident page');
  const heading = await page.getByRole('heading', { level: 1 }).textContent();
  await seen({ heading, cause: await cause.textContent() });
});
