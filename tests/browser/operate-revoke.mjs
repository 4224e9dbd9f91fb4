// An admin revokes an agent on the Agents page, then reads who did what in the audit log,
// looks over the meshes and makes a read-only API token for a script.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD (an admin), FATHOM_ARTIFACTS, FATHOM_AGENT
import { join } from 'node:path';

import { env, runCheck, showsPage, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const agent = env('FATHOM_AGENT');
await runCheck(artifacts, { width: 1400, height: 900 }, 'operate-revoke-failure.png', async (page) => {
  await page.goto(`${baseUrl}/agents`);
  await page.waitForURL(/\/login/, { timeout: 15000 });
  await signIn(page);
  await showsPage(page, /^\/agents$/);
  const row = page.getByRole('row').filter({ has: page.getByText(agent, { exact: true }) }).first();
  await row.waitFor({ timeout: 15000 });
  await row.getByRole('button', { name: 'Revoke' }).click();
  await row.getByRole('group', { name: 'Confirm: Revoke' }).getByRole('button', { name: 'Revoke' }).click();
  // The refreshed list shows the agent revoked, with no revoke button left to press.
  const revokedRow = page.getByRole('row').filter({ has: page.getByText(agent, { exact: true }) })
    .filter({ has: page.getByText('Revoked', { exact: true }) });
  await revokedRow.waitFor({ timeout: 15000 });
  if (await revokedRow.getByRole('button', { name: 'Revoke' }).count()) throw new Error('a revoked agent still offers Revoke');
  await page.screenshot({ path: join(artifacts, 'agents-revoked.png'), fullPage: true });

  await page.getByRole('navigation').getByRole('link', { name: 'Audit' }).click();
  await showsPage(page, /^\/audit$/);
  // Rows of the audit table only: the router changes the URL before the Audit page replaces
  // the Agents page, whose row of the agent also reads "Revoked" (a CI run read those rows).
  const audit = page.getByRole('table').filter({ has: page.getByRole('columnheader', { name: 'Changes' }) });
  // The revocation's own row (the enrolment token's row names the agent too, and may come first).
  await audit.getByRole('row').filter({ hasText: agent }).filter({ hasText: 'Revoked' }).first().waitFor({ timeout: 15000 });
  const auditRows = await audit.getByRole('row').allInnerTexts();
  await page.screenshot({ path: join(artifacts, 'audit-page.png'), fullPage: true });

  await page.getByRole('navigation').getByRole('link', { name: 'Meshes' }).click();
  await showsPage(page, /^\/meshes$/);
  await page.getByRole('heading', { name: 'Meshes', level: 1 }).waitFor({ timeout: 15000 });
  await page.getByRole('table').first().waitFor({ timeout: 15000 });
  await page.screenshot({ path: join(artifacts, 'meshes-page.png'), fullPage: true });

  await page.goto(`${baseUrl}/tokens`);
  await page.getByLabel('Name', { exact: true }).fill('nightly report');
  await page.getByRole('button', { name: 'Create token' }).click();
  const token = (await page.getByTestId('once-secret').innerText()).trim();
  await page.screenshot({ path: join(artifacts, 'account-page.png'), fullPage: true });
  console.log(JSON.stringify({ revoked: agent, auditRows, token }));
});
