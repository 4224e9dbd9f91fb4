// A fetch stub for page tests: answers each API path from a table of canned bodies.
import { vi } from "vitest";

export type ApiRoutes = Record<string, unknown>;

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

function urlOf(input: RequestInfo | URL): URL {
  return new URL(input instanceof Request ? input.url : String(input), "http://fathom.test");
}

/** Stubs the global fetch; a route whose value is a number answers that status, an unknown path 404. */
export function mockApi(routes: ApiRoutes) {
  const fetchMock = vi.fn((input: RequestInfo | URL) => {
    const url = urlOf(input);
    const body = routes[url.pathname];
    if (body === undefined) {
      return Promise.resolve(json(404, { detail: `no mock for ${url.pathname}` }));
    }
    return Promise.resolve(typeof body === "number" ? json(body, { detail: "server error" }) : json(200, body));
  });
  vi.stubGlobal("fetch", fetchMock);
  return fetchMock;
}

export function requestedUrls(fetchMock: ReturnType<typeof mockApi>, path: string): URL[] {
  return fetchMock.mock.calls.map(([input]) => urlOf(input)).filter((url) => url.pathname === path);
}
