// A viewer reads meshes and agents but is offered no change, and the API refuses one.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD (a viewer), FATHOM_ARTIFACTS, FATHOM_MESH
import type { Page } from '@playwright/test';

import { artifact, env, expect, expectAccessible, seen, showsPage, signIn, test } from './fixtures';

const count = (page: Page, role: 'button', name: string) => page.getByRole(role, { name }).count();

test.use({ viewport: { width: 1400, height: 900 }, failureShot: 'operate-viewer-failure.png' });

test('a viewer is offered no change and the API refuses one', async ({ page }) => {
  const meshName = env('FATHOM_MESH');
  await page.goto(`/meshes/${meshName}`);
  await expect(page).toHaveURL(/\/login/);
  await signIn(page);
  await showsPage(page, new RegExp(`^/meshes/${meshName}$`));
  await expect(page.getByLabel('Mesh name')).toBeVisible();
  const meshEditor = {
    save: await count(page, 'button', 'Save mesh'),
    preview: await count(page, 'button', 'Preview plan'),
    addTest: await count(page, 'button', 'Add test'),
    revert: await count(page, 'button', 'Revert this change'),
    nameEditable: await page.getByLabel('Mesh name').isEditable(),
  };
  await page.screenshot({ path: artifact('viewer-mesh.png'), fullPage: true });
  await expectAccessible(page, 'a mesh as a viewer reads it');

  await page.goto('/agents');
  await expect(page.getByRole('table').first()).toBeVisible();
  const agents = {
    enrol: await count(page, 'button', 'Enrol an agent'),
    revoke: await count(page, 'button', 'Revoke'),
    rename: await count(page, 'button', 'Rename'),
    decommission: await count(page, 'button', 'Decommission'),
  };
  const nav = await page.getByRole('navigation').innerText();
  await page.screenshot({ path: artifact('viewer-agents.png'), fullPage: true });
  await expectAccessible(page, 'the Agents page as a viewer reads it');

  // The API says no too, whatever the UI offers.
  const api = await page.evaluate(async (name) => {
    const csrf = document.cookie.split('; ').find((c) => c.startsWith('csrftoken='))?.split('=')[1] ?? '';
    const reply = await fetch('/api/v1/meshes/', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-CSRFToken': csrf },
      body: JSON.stringify({ name: `${name}-by-viewer`, all_agents: true }),
    });
    return { status: reply.status, body: (await reply.json()) as unknown };
  }, meshName);
  await seen({ controls: { meshEditor, agents, nav }, api });
});
