// What every browser check shares: its settings from the environment, and Debian's chromium
// launched through playwright-core (no browser download is possible here) with a page that
// collects console errors.
import { chromium } from 'playwright-core';
import { mkdirSync } from 'node:fs';

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
  return { browser, page, consoleErrors };
}
