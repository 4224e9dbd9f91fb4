// An admin adds people in the UI: each with a role and an initial password.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD (an admin), FATHOM_ARTIFACTS,
//      FATHOM_PEOPLE (JSON: [{"username", "password", "role"}])
import { join } from 'node:path';

import { env, runCheck, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const people = JSON.parse(env('FATHOM_PEOPLE'));
await runCheck(artifacts, { width: 1400, height: 900 }, 'operate-people-failure.png', async (page) => {
  await page.goto(`${baseUrl}/people`);
  await page.waitForURL(/\/login/, { timeout: 15000 });
  await signIn(page);
  await page.waitForURL(/\/people$/, { timeout: 15000 });
  for (const person of people) {
    await page.getByLabel('Username').fill(person.username);
    await page.getByLabel('Initial password').fill(person.password);
    await page.getByLabel('Role', { exact: true }).selectOption(person.role);
    await page.getByRole('button', { name: 'Add person' }).click();
    await page.getByRole('status').filter({ hasText: `Added ${person.username}` }).waitFor({ timeout: 10000 });
    // Listed with the role chosen.
    await page.getByLabel(`Role of ${person.username}`).waitFor({ timeout: 10000 });
  }
  const roles = {};
  for (const person of people) {
    roles[person.username] = await page.getByLabel(`Role of ${person.username}`).inputValue();
  }
  await page.screenshot({ path: join(artifacts, 'people-page.png'), fullPage: true });
  console.log(JSON.stringify({ roles }));
});
