// An operator adds a perfSONAR node on the Agents page (pinned certificate) and sees it
// checked beside the Fathom agents. Saves agents-perfsonar-node.png.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_ARTIFACTS, FATHOM_NODE_NAME,
//      FATHOM_NODE_URL, FATHOM_NODE_ADDRESS, FATHOM_NODE_PIN
import { artifact, env, expect, expectAccessible, seen, showsPage, signIn, test } from './fixtures';

test.use({ viewport: { width: 1500, height: 1000 }, failureShot: 'perfsonar-node-failure.png' });

test('a perfSONAR node added on the Agents page', async ({ page }) => {
  const name = env('FATHOM_NODE_NAME');
  await page.goto('/agents');
  await expect(page).toHaveURL(/\/login/);
  await signIn(page);
  await showsPage(page, /^\/agents$/);
  await page.getByRole('button', { name: 'Add perfSONAR node' }).click();
  const form = page.getByRole('form', { name: 'Add perfSONAR node' });
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('pScheduler API URL').fill(env('FATHOM_NODE_URL'));
  await form.getByLabel('Measurement address').fill(env('FATHOM_NODE_ADDRESS'));
  await form.getByLabel('TLS verification').selectOption('pinned');
  await form.getByLabel('SHA-256 fingerprint').fill(env('FATHOM_NODE_PIN'));
  await expectAccessible(page, 'the Agents page with the perfSONAR node form');
  await form.getByRole('button', { name: 'Add node' }).click();
  // Listed beside the agents, checked: reachable, with its kind.
  const row = page.getByRole('row').filter({ hasText: name }).first();
  await expect(row).toBeVisible({ timeout: 20_000 });
  await expect(row.getByText('reachable', { exact: true }).first()).toBeVisible({ timeout: 20_000 });
  const rowText = await row.innerText();
  await page.screenshot({ path: artifact('agents-perfsonar-node.png'), fullPage: true });
  await expectAccessible(page, 'the Agents page with the node listed');
  await seen({ rowText });
});
