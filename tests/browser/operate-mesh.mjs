// An operator builds a mesh in the editor, reads the plan preview, saves it, then makes an
// enrolment token for a new agent on the Agents page and prints it (shown once).
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD (an operator), FATHOM_ARTIFACTS,
//      FATHOM_MESH (the new mesh's name), FATHOM_MEMBERS (comma-separated agent names),
//      FATHOM_NEW_AGENT, FATHOM_NEW_ADDRESS
import { join } from 'node:path';

import { env, runCheck, showsPage, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const meshName = env('FATHOM_MESH');
const members = env('FATHOM_MEMBERS').split(',');
const newAgent = env('FATHOM_NEW_AGENT');
const newAddress = env('FATHOM_NEW_ADDRESS');
await runCheck(artifacts, { width: 1400, height: 1000 }, 'operate-mesh-failure.png', async (page) => {
  await page.goto(`${baseUrl}/meshes/new`);
  await page.waitForURL(/\/login/, { timeout: 15000 });
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
  const test = tests.first();
  await test.getByLabel('Test name').fill('tput');
  await test.getByLabel('Test type').selectOption('throughput');
  await test.getByLabel('Interval (s)').fill('3600');
  await test.getByLabel('Slip (s)').fill('1800');
  await test.getByLabel('duration_s', { exact: true }).fill('5');
  while ((await tests.count()) > 1) {
    await tests.nth(1).getByRole('button', { name: /Remove/ }).click();
  }

  await page.getByRole('button', { name: 'Preview plan' }).click();
  const preview = page.getByTestId('plan-preview');
  for (const member of members) {
    await preview.getByText(member, { exact: true }).first().waitFor({ timeout: 15000 });
  }
  const previewText = await preview.innerText();
  await page.screenshot({ path: join(artifacts, 'mesh-editor-preview.png'), fullPage: true });

  await page.getByRole('button', { name: 'Save mesh' }).click();
  await showsPage(page, new RegExp(`^/meshes/${meshName}$`));
  await page.getByRole('status').filter({ hasText: `Mesh ${meshName} saved` }).waitFor({ timeout: 15000 });
  await page.screenshot({ path: join(artifacts, 'mesh-editor-saved.png'), fullPage: true });

  await page.goto(`${baseUrl}/agents`);
  await page.getByRole('button', { name: 'Enrol an agent' }).click();
  await page.getByLabel('Agent name').fill(newAgent);
  await page.getByLabel('Address').fill(newAddress);
  await page.getByRole('button', { name: 'Create enrolment token' }).click();
  const secret = page.getByTestId('once-secret');
  await secret.waitFor({ timeout: 15000 });
  const token = (await secret.innerText()).trim();
  await page.screenshot({ path: join(artifacts, 'agents-enrolment-token.png'), fullPage: true });
  console.log(JSON.stringify({ token, previewText }));
  if (!token.startsWith('fet_')) throw new Error(`the page showed no enrolment token: ${token}`);
});
