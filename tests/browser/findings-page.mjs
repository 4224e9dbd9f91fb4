// The Findings page on lab-made findings: the control path's throughput finding is listed in
// the mesh's filter, and its link opens the path page at the finding. Saves findings-page.png.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_MESH, FATHOM_PATH_TEXT ("wa → wb"),
//      FATHOM_ARTIFACTS
import { join } from 'node:path';

import { env, runCheck, showsPage, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const mesh = env('FATHOM_MESH');
const pathText = env('FATHOM_PATH_TEXT');
await runCheck(artifacts, { width: 1400, height: 900 }, 'findings-failure.png', async (page) => {
  await page.goto(`${baseUrl}/login`);
  await signIn(page);
  await page.waitForURL((url) => !url.pathname.startsWith('/login'), { timeout: 15000 });
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
    { timeout: 30000 },
  );
  await page.getByLabel('Mesh').selectOption(mesh);
  await page.waitForURL(new RegExp(`mesh=${mesh}`), { timeout: 10000 });
  await filtered;
  await page.locator('table.findings:not(.stale)').waitFor({ timeout: 20000 });
  const link = page.getByRole('link', { name: pathText });
  await link.first().waitFor({ timeout: 20000 });
  const rows = await page.locator('table.findings tbody tr').allTextContents();
  await page.screenshot({ path: join(artifacts, 'findings-page.png'), fullPage: true });
  await link.first().click();
  await page.waitForURL(/\/paths\/[0-9a-f-]+\/[0-9a-f-]+\?.*from=/, { timeout: 10000 });
  await showsPage(page, /^\/paths\/[0-9a-f-]+\/[0-9a-f-]+$/);
  console.log(JSON.stringify({ rows, url: page.url() }));
});
