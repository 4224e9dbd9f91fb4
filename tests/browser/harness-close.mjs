// The harness's own check: closing the browser while the page's API calls are still finishing
// must not make Node exit non-zero. An unhandled rejection from an event handler once failed a
// check that had passed (the Findings page, in CI). Prints one JSON line with the rounds run.
import http from 'node:http';
import { openPage } from './browser.mjs';

const ROUNDS = Number(process.env.FATHOM_ROUNDS ?? '5');
const server = http.createServer((request, response) => {
  if (request.url.startsWith('/api/')) {
    response.setHeader('content-type', 'application/json');
    response.end('{}');
    return;
  }
  response.setHeader('content-type', 'text/html');
  // A burst of API calls every 5 ms, so some are always in flight when the browser closes.
  response.end('<script>setInterval(() => { for (let i = 0; i < 20; i++) fetch(`/api/x?${i}`); }, 5);</script>');
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${server.address().port}/`;
for (let round = 0; round < ROUNDS; round++) {
  const { browser, page } = await openPage(process.env.FATHOM_ARTIFACTS ?? '/tmp', { width: 400, height: 300 });
  await page.goto(url);
  await page.waitForTimeout(700);
  await browser.close();
}
// Rejections surface on a later turn of the event loop; give them one before reporting.
await new Promise((resolve) => setTimeout(resolve, 300));
server.close();
console.log(JSON.stringify({ rounds: ROUNDS }));
