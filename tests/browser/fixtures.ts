// What every browser check shares: its settings from the environment, a page whose console
// errors fail the check and whose API calls are logged, sign-in, the waits the app needs
// (a page shown, a chart drawn), the accessibility check and the record the Python test
// reads (FATHOM_SEEN_FILE).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import AxeBuilder from '@axe-core/playwright';
import { test as base, expect, type Locator, type Page, type Request } from '@playwright/test';

export { expect };

/** An environment variable the check needs; throws when it is not set. */
export const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

/** Where a screenshot named `name` goes: $FATHOM_ARTIFACTS, which docs and tests read. */
export const artifact = (name: string): string => join(env('FATHOM_ARTIFACTS'), name);

interface ApiCall {
  method: string;
  path: string;
  sentS: string;
  status?: number;
  done: string;
}

// Chromium reports every HTTP error answer as a console error. A 4xx is an answer the app
// shows: a signed-out page's 403 (then the login form), a refused change, a draft mesh's plan
// preview refused with its reasons; the API call log lists them. A 5xx, and whatever else
// reaches the console, is an error of the app or the server.
const ANSWERED_BY_THE_UI = /^Failed to load resource: the server responded with a status of 4\d\d /;

/**
 * Collects the page's console errors and logs its API calls with their timing: a wait that
 * timed out then shows whether the request was slow, failed, answered with an error or was
 * never made.
 */
export function watchPage(page: Page): { consoleErrors: string[]; apiLog: () => string[] } {
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && !ANSWERED_BY_THE_UI.test(message.text())) {
      consoleErrors.push(`${message.text()} (${message.location().url})`);
    }
  });
  page.on('pageerror', (error) => consoleErrors.push(`uncaught: ${error.message}`));
  const started = Date.now();
  const at = () => ((Date.now() - started) / 1000).toFixed(1);
  const calls = new Map<Request, ApiCall>();
  // Synchronous handlers only: a promise such as request.response() that is still open when
  // the page closes rejects unhandled, and fails a check that passed (harness-close.spec.ts).
  page.on('request', (request) => {
    if (!request.url().includes('/api/')) return;
    const url = new URL(request.url());
    calls.set(request, { method: request.method(), path: `${url.pathname}${url.search}`, sentS: at(), done: 'pending' });
  });
  page.on('response', (response) => {
    const call = calls.get(response.request());
    if (call) call.status = response.status();
  });
  page.on('requestfinished', (request) => {
    const call = calls.get(request);
    if (call) call.done = `${call.status ?? '?'} at ${at()} s`;
  });
  page.on('requestfailed', (request) => {
    const call = calls.get(request);
    if (call) call.done = `failed (${request.failure()?.errorText ?? '?'}) at ${at()} s`;
  });
  const apiLog = () => [...calls.values()].map((call) => `${call.method} ${call.path} sent at ${call.sentS} s: ${call.done}`);
  return { consoleErrors, apiLog };
}

interface CheckFixtures {
  /** The full-page screenshot a failed check leaves in $FATHOM_ARTIFACTS beside its others. */
  failureShot: string;
}

export const test = base.extend<CheckFixtures>({
  failureShot: ['', { option: true }],
  page: async ({ page, failureShot }, use, testInfo) => {
    const { consoleErrors, apiLog } = watchPage(page);
    await use(page);
    // Console errors fail the check below, after the body has passed: it has failed then too.
    if (testInfo.status !== testInfo.expectedStatus || consoleErrors.length > 0) {
      await testInfo.attach('api-calls', { body: apiLog().slice(-40).join('\n'), contentType: 'text/plain' });
      if (failureShot) await page.screenshot({ path: artifact(failureShot), fullPage: true }).catch(() => undefined);
    }
    expect(consoleErrors, 'the page logged errors to the console').toEqual([]);
  },
});

/**
 * The spec's findings for the Python test that ran it: written as JSON to FATHOM_SEEN_FILE
 * (printed when that is not set, as when a spec is run by hand).
 */
export async function seen(record: Record<string, unknown>): Promise<void> {
  const json = JSON.stringify(record);
  await test.info().attach('seen', { body: json, contentType: 'application/json' });
  const file = process.env.FATHOM_SEEN_FILE;
  if (file) writeFileSync(file, json);
  else console.log(json);
}

/** Fills the login form the page shows and submits it; the caller waits for where it leads. */
export async function signIn(page: Page): Promise<void> {
  await page.getByLabel('Username').fill(env('FATHOM_USER'));
  await page.getByLabel('Password').fill(env('FATHOM_PASSWORD'));
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** Signs in on the login page and waits until the app has left it. */
export async function signInAtLogin(page: Page): Promise<void> {
  await page.goto('/login');
  await signIn(page);
  await expect(page).toHaveURL((url) => !url.pathname.startsWith('/login'));
}

/**
 * Waits until the app shows the page whose path matches `pathname` (tested against the URL's
 * path only). The router changes the URL before React replaces the old page, so the URL alone
 * lets a check read the old page: the layout's `main[data-path]` changes in the same commit as
 * the page.
 */
export async function showsPage(page: Page, pathname: RegExp, timeout = 15_000): Promise<void> {
  await expect(page).toHaveURL((url) => pathname.test(url.pathname), { timeout });
  await expect(page.locator('main[data-path]')).toHaveAttribute('data-path', pathname, { timeout });
}

/**
 * Waits until a Plotly chart has drawn data (a line with at least two points, a marker or a
 * bar) and returns how many such elements it drew.
 */
export async function drawnData(chart: Locator, timeout = 20_000): Promise<number> {
  const count = () =>
    chart.evaluate((root) => {
      const lines = [...root.querySelectorAll('g.scatterlayer path.js-line')].filter((path) =>
        (path.getAttribute('d') ?? '').includes('L'),
      ).length;
      return lines + root.querySelectorAll('g.scatterlayer path.point, g.barlayer g.point').length;
    });
  let drawn = 0;
  await expect
    .poll(async () => (drawn = await count().catch(() => 0)), { timeout, message: 'the chart drew no data' })
    .toBeGreaterThan(0);
  return drawn;
}

/** The violations axe-core reports that fail a check: a NOC engineer with a screen reader or
 * a keyboard cannot use what they flag. */
const FAILING_IMPACTS = new Set(['serious', 'critical']);

/**
 * Runs axe-core on the page as it is now and fails on serious or critical violations, listing
 * each rule with the elements it flagged. `label` names the view in that list.
 */
export async function expectAccessible(page: Page, label: string): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  const failing = results.violations.filter((violation) => FAILING_IMPACTS.has(violation.impact ?? ''));
  const lines = failing.map((violation) => {
    const targets = violation.nodes.slice(0, 5).map((node) => `    ${node.target.join(' ')}: ${node.html.slice(0, 160)}`);
    const more = violation.nodes.length > 5 ? [`    and ${violation.nodes.length - 5} more`] : [];
    return [`  ${violation.id} (${violation.impact ?? '?'}): ${violation.help} ${violation.helpUrl}`, ...targets, ...more].join(
      '\n',
    );
  });
  expect(failing.length, `accessibility of ${label} (${page.url()}):\n${lines.join('\n')}`).toBe(0);
}
