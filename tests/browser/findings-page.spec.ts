// The Findings page on lab-made findings: the control path's throughput finding is listed in
// the mesh's filter, and its link opens the path page at the finding. Saves findings-page.png.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_MESH, FATHOM_PATH_TEXT ("wa → wb"),
//      FATHOM_ARTIFACTS
import { artifact, env, expect, expectAccessible, seen, showsPage, signInAtLogin, test } from './fixtures';

test.use({ viewport: { width: 1400, height: 900 }, failureShot: 'findings-failure.png' });

test("a mesh's findings link to the path at the finding", async ({ page }) => {
  const mesh = env('FATHOM_MESH');
  await signInAtLogin(page);
  await page.getByRole('link', { name: 'Findings' }).click();
  await showsPage(page, /^\/findings$/);
  // The unfiltered rows stay up, marked stale, until the mesh's own arrive. The URL changes
  // before React renders the stale mark, so the old rows can look current for a moment: wait
  // for the filtered list's response first (its request starts only after that render).
  const filtered = page.waitForResponse(
    (response) =>
      response.url().includes('/analysis/findings/?') &&
      new URL(response.url()).searchParams.get('mesh') === mesh &&
      response.ok(),
    { timeout: 30_000 },
  );
  await page.getByLabel('Mesh').selectOption(mesh);
  await expect(page).toHaveURL(new RegExp(`mesh=${mesh}`), { timeout: 10_000 });
  await filtered;
  await expect(page.locator('table.findings:not(.stale)')).toBeVisible({ timeout: 20_000 });
  const link = page.getByRole('link', { name: env('FATHOM_PATH_TEXT') }).first();
  await expect(link).toBeVisible({ timeout: 20_000 });
  const rows = await page.locator('table.findings tbody tr').allTextContents();
  await page.screenshot({ path: artifact('findings-page.png'), fullPage: true });
  await expectAccessible(page, 'the Findings page');
  await link.click();
  await expect(page).toHaveURL(/\/paths\/[0-9a-f-]+\/[0-9a-f-]+\?.*from=/, { timeout: 10_000 });
  await showsPage(page, /^\/paths\/[0-9a-f-]+\/[0-9a-f-]+$/);
  await expectAccessible(page, 'the path page at the finding');
  await seen({ rows, url: page.url() });
});
