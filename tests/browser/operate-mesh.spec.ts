// An operator builds a mesh in the editor, reads the plan preview, saves it, then makes an
// enrolment token for a new agent on the Agents page and records it (shown once).
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD (an operator), FATHOM_ARTIFACTS,
//      FATHOM_MESH (the new mesh's name), FATHOM_MEMBERS (comma-separated agent names),
//      FATHOM_NEW_AGENT, FATHOM_NEW_ADDRESS
import { artifact, env, expect, expectAccessible, seen, showsPage, signIn, test } from './fixtures';

test.use({ viewport: { width: 1400, height: 1000 }, failureShot: 'operate-mesh-failure.png' });

test('a mesh built in the editor, then an enrolment token', async ({ page }) => {
  const meshName = env('FATHOM_MESH');
  const members = env('FATHOM_MEMBERS').split(',');
  await page.goto('/meshes/new');
  await expect(page).toHaveURL(/\/login/);
  await signIn(page);
  await showsPage(page, /^\/meshes\/new$/);

  await page.getByLabel('Mesh name').fill(meshName);
  await page.getByLabel('Description').fill('made in the browser by the system tests');
  for (const member of members) {
    await page.getByLabel(member, { exact: true }).check();
  }
  // Throughput once an hour for 5 s within a 30 min window: a plan the preview can show.
  const tests = page.getByRole('group', { name: /^Test / });
  if ((await tests.count()) === 0) {
    await page.getByRole('button', { name: 'Add test' }).click();
  }
  const first = tests.first();
  await first.getByLabel('Test name').fill('tput');
  await first.getByLabel('Test type').selectOption('throughput');
  await first.getByLabel('Interval (s)').fill('3600');
  await first.getByLabel('Slip (s)').fill('1800');
  await first.getByLabel('duration_s', { exact: true }).fill('5');
  while ((await tests.count()) > 1) {
    await tests.nth(1).getByRole('button', { name: /Remove/ }).click();
  }

  await page.getByRole('button', { name: 'Preview plan' }).click();
  const preview = page.getByTestId('plan-preview');
  for (const member of members) {
    await expect(preview.getByText(member, { exact: true }).first()).toBeVisible();
  }
  const previewText = await preview.innerText();
  await page.screenshot({ path: artifact('mesh-editor-preview.png'), fullPage: true });
  await expectAccessible(page, 'the mesh editor with its plan preview');

  await page.getByRole('button', { name: 'Save mesh' }).click();
  await showsPage(page, new RegExp(`^/meshes/${meshName}$`));
  await expect(page.getByRole('status').filter({ hasText: `Mesh ${meshName} saved` })).toBeVisible();
  await page.screenshot({ path: artifact('mesh-editor-saved.png'), fullPage: true });
  await expectAccessible(page, 'the saved mesh');

  await page.goto('/agents');
  await page.getByRole('button', { name: 'Enrol an agent' }).click();
  await page.getByLabel('Agent name').fill(env('FATHOM_NEW_AGENT'));
  await page.getByLabel('Address').fill(env('FATHOM_NEW_ADDRESS'));
  await page.getByRole('button', { name: 'Create enrolment token' }).click();
  const secret = page.getByTestId('once-secret');
  await expect(secret).toBeVisible();
  const token = (await secret.innerText()).trim();
  await page.screenshot({ path: artifact('agents-enrolment-token.png'), fullPage: true });
  await expectAccessible(page, 'the Agents page with an enrolment token');
  await seen({ token, previewText });
  expect(token, 'the page showed no enrolment token').toMatch(/^fet_/);
});
