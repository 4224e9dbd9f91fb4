// A viewer reads meshes and agents but is offered no change, and the API refuses one.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD (a viewer), FATHOM_ARTIFACTS, FATHOM_MESH
import { join } from 'node:path';

import { env, runCheck, showsPage, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const meshName = env('FATHOM_MESH');
await runCheck(artifacts, { width: 1400, height: 900 }, 'operate-viewer-failure.png', async (page) => {
  await page.goto(`${baseUrl}/meshes/${meshName}`);
  await page.waitForURL(/\/login/, { timeout: 15000 });
  await signIn(page);
  await showsPage(page, new RegExp(`^/meshes/${meshName}$`));
  await page.getByLabel('Mesh name').waitFor({ timeout: 15000 });
  const controls = {};
  const count = async (role, name) => page.getByRole(role, { name }).count();
  controls.meshEditor = {
    save: await count('button', 'Save mesh'),
    preview: await count('button', 'Preview plan'),
    addTest: await count('button', 'Add test'),
    revert: await count('button', 'Revert this change'),
    nameEditable: await page.getByLabel('Mesh name').isEditable(),
  };
  await page.screenshot({ path: join(artifacts, 'viewer-mesh.png'), fullPage: true });

  await page.goto(`${baseUrl}/agents`);
  await page.getByRole('table').first().waitFor({ timeout: 15000 });
  controls.agents = {
    enrol: await count('button', 'Enrol an agent'),
    revoke: await count('button', 'Revoke'),
    rename: await count('button', 'Rename'),
    decommission: await count('button', 'Decommission'),
  };
  controls.nav = await page.getByRole('navigation').innerText();
  await page.screenshot({ path: join(artifacts, 'viewer-agents.png'), fullPage: true });

  // The API says no too, whatever the UI offers.
  const api = await page.evaluate(async (name) => {
    const csrf = document.cookie.split('; ').find((c) => c.startsWith('csrftoken='))?.split('=')[1] ?? '';
    const reply = await fetch('/api/v1/meshes/', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-CSRFToken': csrf },
      body: JSON.stringify({ name: `${name}-by-viewer`, all_agents: true }),
    });
    return { status: reply.status, body: await reply.json() };
  }, meshName);
  console.log(JSON.stringify({ controls, api }));
});
