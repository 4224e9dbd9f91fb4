// The harness's own check: closing a page while its API calls are still finishing must not
// fail a check that passed. An unhandled rejection from an event handler once failed one
// (the Findings page, in CI). Records the rounds run. The page is a test server's script, not
// Fathom's, so it gets no accessibility check.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

import { seen, test, watchPage } from './fixtures';

const ROUNDS = Number(process.env.FATHOM_ROUNDS ?? '5');

// Thousands of requests a second: a trace of them would take longer than the rounds.
test.use({ trace: 'off' });

test('closing pages with API calls in flight', async ({ browser }) => {
  const server = http.createServer((request, response) => {
    if (request.url?.startsWith('/api/')) {
      response.setHeader('content-type', 'application/json');
      response.end('{}');
      return;
    }
    response.setHeader('content-type', 'text/html');
    // A burst of API calls every 5 ms, so some are always in flight when the page closes.
    response.end('<script>setInterval(() => { for (let i = 0; i < 20; i++) fetch(`/api/x?${i}`); }, 5);</script>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const context = await browser.newContext({ viewport: { width: 400, height: 300 } });
      const page = await context.newPage();
      watchPage(page);
      await page.goto(`http://127.0.0.1:${port}/`);
      await page.waitForTimeout(700);
      await context.close();
    }
    // Rejections surface on a later turn of the event loop; give them one before reporting.
    await new Promise((resolve) => setTimeout(resolve, 300));
  } finally {
    server.close();
  }
  await seen({ rounds: ROUNDS });
});
