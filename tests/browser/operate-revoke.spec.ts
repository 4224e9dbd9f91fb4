// An admin revokes an agent on the Agents page, then reads who did what in the audit log,
// looks over the meshes and makes a read-only API token for a script.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD (an admin), FATHOM_ARTIFACTS, FATHOM_AGENT
import { artifact, env, expect, expectAccessible, seen, showsPage, signIn, test } from './fixtures';

test.use({ viewport: { width: 1400, height: 900 }, failureShot: 'operate-revoke-failure.png' });

test('an agent revoked, the audit log, the meshes and an API token', async ({ page }) => {
  const agent = env('FATHOM_AGENT');
  await page.goto('/agents');
  await expect(page).toHaveURL(/\/login/);
  await signIn(page);
  await showsPage(page, /^\/agents$/);
  const agentRows = page.getByRole('row').filter({ has: page.getByText(agent, { exact: true }) });
  const row = agentRows.first();
  await expect(row).toBeVisible();
  await expectAccessible(page, 'the Agents page');
  await row.getByRole('button', { name: 'Revoke' }).click();
  await row.getByRole('group', { name: 'Confirm: Revoke' }).getByRole('button', { name: 'Revoke' }).click();
  // The refreshed list shows the agent revoked, with no revoke button left to press.
  const revokedRow = agentRows.filter({ has: page.getByText('Revoked', { exact: true }) });
  await expect(revokedRow).toBeVisible();
  await expect(revokedRow.getByRole('button', { name: 'Revoke' }), 'a revoked agent still offers Revoke').toHaveCount(0);
  await page.screenshot({ path: artifact('agents-revoked.png'), fullPage: true });

  await page.getByRole('navigation').getByRole('link', { name: 'Audit' }).click();
  await showsPage(page, /^\/audit$/);
  // Rows of the audit table only: the router changes the URL before the Audit page replaces
  // the Agents page, whose row of the agent also reads "Revoked" (a CI run read those rows).
  const audit = page.getByRole('table').filter({ has: page.getByRole('columnheader', { name: 'Changes' }) });
  // The revocation's own row (the enrolment token's row names the agent too, and may come first).
  await expect(audit.getByRole('row').filter({ hasText: agent }).filter({ hasText: 'Revoked' }).first()).toBeVisible();
  const auditRows = await audit.getByRole('row').allInnerTexts();
  await page.screenshot({ path: artifact('audit-page.png'), fullPage: true });
  await expectAccessible(page, 'the audit log');

  await page.getByRole('navigation').getByRole('link', { name: 'Meshes' }).click();
  await showsPage(page, /^\/meshes$/);
  await expect(page.getByRole('heading', { name: 'Meshes', level: 1 })).toBeVisible();
  await expect(page.getByRole('table').first()).toBeVisible();
  await page.screenshot({ path: artifact('meshes-page.png'), fullPage: true });
  await expectAccessible(page, 'the Meshes page');

  await page.goto('/tokens');
  await page.getByLabel('Name', { exact: true }).fill('nightly report');
  await page.getByRole('button', { name: 'Create token' }).click();
  const token = (await page.getByTestId('once-secret').innerText()).trim();
  await page.screenshot({ path: artifact('account-page.png'), fullPage: true });
  await expectAccessible(page, 'the API tokens page with a new token');
  await seen({ revoked: agent, auditRows, token });
});
