// An admin adds people in the UI: each with a role and an initial password.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD (an admin), FATHOM_ARTIFACTS,
//      FATHOM_PEOPLE (JSON: [{"username", "password", "role"}])
import { join } from 'node:path';

import { env, runCheck, showsPage, signIn } from './browser.mjs';

const baseUrl = env('FATHOM_URL');
const artifacts = env('FATHOM_ARTIFACTS');
const people = JSON.parse(env('FATHOM_PEOPLE'));
await runCheck(artifacts, { width: 1400, height: 900 }, 'operate-people-failure.png', async (page) => {
  await page.goto(`${baseUrl}/people`);
  await page.waitForURL(/\/login/, { timeout: 15000 });
  await signIn(page);
  await showsPage(page, /^\/people$/);
  const form = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Add a person' }) });
  const add = form.getByRole('button', { name: 'Add person' });
  await add.waitFor({ timeout: 15000 });
  for (const person of people) {
    // Filled again until the button takes it: a form re-mounted while the signed-in user's
    // queries settle starts empty, and its button stays disabled (once seen: 30 s).
    for (let attempt = 1; ; attempt += 1) {
      await form.getByLabel('Username').fill(person.username);
      await form.getByLabel('Initial password').fill(person.password);
      await form.getByLabel('Role', { exact: true }).selectOption(person.role);
      if (await add.isEnabled()) break;
      if (attempt === 5) throw new Error(`"Add person" stays disabled with ${person.username} filled in`);
      await page.waitForTimeout(1000);
    }
    await add.click();
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
