// What every browser check shares: its settings from the environment, and Debian's chromium
// launched through playwright-core (no browser download is possible here) with a page that
// collects console errors.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';

export const env = (name) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

/** Opens chromium and one page; the artifacts directory exists afterwards. */
export async function openPage(artifacts, viewport) {
  mkdirSync(artifacts, { recursive: true });
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
    ],
  });
  const page = await browser.newPage({ viewport });
  const consoleErrors = [];
  page.on('console', (msg) => { if (msg.type() === 'error') consoleErrors.push(msg.text()); });
  // Every API call with its timing, printed when a check fails: a wait that timed out then
  // shows whether the request was slow, failed, answered with an error or never made.
  const started = Date.now();
  const apiCalls = new Map();
  const at = () => ((Date.now() - started) / 1000).toFixed(1);
  // Synchronous handlers only: a promise such as request.response() that is still open when
  // the browser closes rejects unhandled, and Node then exits 1 after a check that passed.
  page.on('request', (request) => {
    if (request.url().includes('/api/')) apiCalls.set(request, { sent: at(), done: 'pending' });
  });
  page.on('response', (response) => {
    const call = apiCalls.get(response.request());
    if (call) call.status = response.status();
  });
  page.on('requestfinished', (request) => {
    const call = apiCalls.get(request);
    if (call) call.done = `${call.status ?? '?'} at ${at()} s`;
  });
  page.on('requestfailed', (request) => {
    const call = apiCalls.get(request);
    if (call) call.done = `failed (${request.failure()?.errorText ?? '?'}) at ${at()} s`;
  });
  const apiLog = () =>
    [...apiCalls].map(([request, call]) => {
      const url = new URL(request.url());
      return `  ${request.method()} ${url.pathname}${url.search} sent at ${call.sent} s: ${call.done}`;
    });
  return { browser, page, consoleErrors, apiLog };
}

/**
 * Waits until the app shows the page whose path matches `pathname` (a RegExp tested against
 * the URL's path only). The router changes the URL before React replaces the old page, so
 * the URL alone lets a check read the old page: the layout's `main[data-path]` changes in
 * the same commit as the page.
 */
export async function showsPage(page, pathname, timeout = 15000) {
  await page.waitForURL((url) => pathname.test(url.pathname), { timeout });
  await page.waitForFunction(
    ([source, flags]) => {
      const shown = document.querySelector('main[data-path]')?.getAttribute('data-path');
      return shown != null && new RegExp(source, flags).test(shown);
    },
    [pathname.source, pathname.flags],
    { timeout },
  );
}

/** Fills the login form the page shows and submits it; the caller waits for where it leads. */
export async function signIn(page) {
  await page.getByLabel('Username').fill(env('FATHOM_USER'));
  await page.getByLabel('Password').fill(env('FATHOM_PASSWORD'));
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/**
 * Runs one check in a fresh page and exits: 0 when `body(page)` resolves, 1 with its reason
 * (and a screenshot named `failureShot`) when it throws. Console errors are printed either way.
 */
export async function runCheck(artifacts, viewport, failureShot, body) {
  const { browser, page, consoleErrors, apiLog } = await openPage(artifacts, viewport);
  let failed = false;
  try {
    await body(page);
  } catch (err) {
    failed = true;
    console.error(`browser check failed: ${err instanceof Error ? err.message : String(err)}`);
    console.error(`API calls:\n${apiLog().slice(-40).join('\n')}`);
    await page.screenshot({ path: join(artifacts, failureShot), fullPage: true }).catch(() => {});
  } finally {
    if (consoleErrors.length) console.error(`console errors: ${consoleErrors.join(' | ')}`);
    await browser.close();
  }
  process.exit(failed ? 1 : 0);
}

/**
 * Waits until a Plotly chart has drawn data (a line with at least two points, a marker or a
 * bar) and returns how many such elements it drew.
 */
export async function drawnData(chart, timeout = 20000) {
  const count = () =>
    chart.evaluate((root) => {
      const lines = [...root.querySelectorAll('g.scatterlayer path.js-line')].filter(
        (path) => (path.getAttribute('d') ?? '').includes('L'),
      ).length;
      return lines + root.querySelectorAll('g.scatterlayer path.point, g.barlayer g.point').length;
    });
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    const drawn = await count().catch(() => 0);
    if (drawn > 0) return drawn;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error('the chart drew no data');
}
