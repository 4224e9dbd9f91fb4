// The browser checks' runner: one spec at a time against a stack the Python system tests
// start (tests/system/conftest.py, Stack.browser_check), driving Debian's chromium.
import { join } from 'node:path';

import { defineConfig } from '@playwright/test';

const artifacts = process.env.FATHOM_ARTIFACTS ?? join(import.meta.dirname, '..', 'artifacts');

export default defineConfig({
  testDir: '.',
  testMatch: '*.spec.ts',
  // One stack, one browser: specs change what the next one sees (people, meshes, agents).
  workers: 1,
  fullyParallel: false,
  // A flaky check is fixed, never retried.
  retries: 0,
  // The stack is busy measuring beside the browser; the caller's subprocess timeout is longer.
  timeout: 120_000,
  expect: { timeout: 15_000 },
  outputDir: join(artifacts, 'playwright'),
  reporter: 'list',
  use: {
    baseURL: process.env.FATHOM_URL,
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    actionTimeout: 15_000,
    navigationTimeout: 30_000,
    // No browser download is possible here: Debian's chromium, as the system tests install it.
    launchOptions: {
      executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
      args: [
        '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
        '--disable-background-networking', '--disable-component-update', '--disable-sync',
      ],
    },
  },
});
