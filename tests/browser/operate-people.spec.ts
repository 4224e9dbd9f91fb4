// An admin adds people in the UI: each with a role and an initial password.
//
// Env: FATHOM_URL, FATHOM_USER, FATHOM_PASSWORD (an admin), FATHOM_ARTIFACTS,
//      FATHOM_PEOPLE (JSON: [{"username", "password", "role"}])
import { artifact, env, expect, expectAccessible, seen, showsPage, signIn, test } from './fixtures';

interface Person {
  username: string;
  password: string;
  role: string;
}

test.use({ viewport: { width: 1400, height: 900 }, failureShot: 'operate-people-failure.png' });

test('people added with their roles', async ({ page }) => {
  const people = JSON.parse(env('FATHOM_PEOPLE')) as Person[];
  await page.goto('/people');
  await expect(page).toHaveURL(/\/login/);
  await signIn(page);
  await showsPage(page, /^\/people$/);
  const form = page.locator('section.panel', { has: page.getByRole('heading', { name: 'Add a person' }) });
  const add = form.getByRole('button', { name: 'Add person' });
  await expect(add).toBeVisible();
  await expectAccessible(page, 'the People page');
  for (const person of people) {
    // Filled again until the button takes it: a form re-mounted while the signed-in user's
    // queries settle starts empty, and its button stays disabled (once seen: 30 s).
    await expect(async () => {
      await form.getByLabel('Username').fill(person.username);
      await form.getByLabel('Initial password').fill(person.password);
      await form.getByLabel('Role', { exact: true }).selectOption(person.role);
      await expect(add, `"Add person" stays disabled with ${person.username} filled in`).toBeEnabled({ timeout: 1000 });
    }).toPass({ intervals: [1000], timeout: 10_000 });
    await add.click();
    await expect(page.getByRole('status').filter({ hasText: `Added ${person.username}` })).toBeVisible({ timeout: 10_000 });
    // Listed with the role chosen.
    await expect(page.getByLabel(`Role of ${person.username}`)).toBeVisible({ timeout: 10_000 });
  }
  const roles: Record<string, string> = {};
  for (const person of people) {
    roles[person.username] = await page.getByLabel(`Role of ${person.username}`).inputValue();
  }
  await page.screenshot({ path: artifact('people-page.png'), fullPage: true });
  await expectAccessible(page, 'the People page with the people added');
  await seen({ roles });
});
