// A fetch stub for page tests: answers each API path from a table of canned bodies.
import { vi } from "vitest";

/** A request as a route handler sees it: method, URL and the parsed JSON body (null when none). */
export interface MockRequest {
  method: string;
  url: URL;
  body: unknown;
}

/** An answer with a status other than 200 (e.g. 201 with a body, 400 with field errors, 204). */
export class Reply {
  constructor(
    readonly status: number,
    readonly body: unknown = null,
  ) {}
}

export function reply(status: number, body: unknown = null): Reply {
  return new Reply(status, body);
}

export type RouteHandler = (request: MockRequest) => unknown;

/**
 * Keys are "/api/v1/path/" (any method) or "POST /api/v1/path/" (that method only; tried first).
 * A value is a 200 body, a number (that status with a stock detail), a Reply, a handler
 * that gets the request and returns any of those, or a promise of one (an answer held back
 * until the test resolves it).
 */
export type ApiRoutes = Record<string, unknown>;

function json(status: number, body: unknown): Response {
  if (status === 204) {
    return new Response(null, { status });
  }
  return new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json" } });
}

function urlOf(input: RequestInfo | URL): URL {
  return new URL(input instanceof Request ? input.url : String(input), "http://fathom.test");
}

function methodOf(input: RequestInfo | URL, init?: RequestInit): string {
  return (init?.method ?? (input instanceof Request ? input.method : "GET")).toUpperCase();
}

function parsedBody(init?: RequestInit): unknown {
  if (typeof init?.body !== "string") {
    return null;
  }
  try {
    return JSON.parse(init.body) as unknown;
  } catch {
    return init.body;
  }
}

function answer(value: unknown, request: MockRequest): Response {
  if (typeof value === "function") {
    return answer((value as RouteHandler)(request), request);
  }
  if (value instanceof Reply) {
    return json(value.status, value.body);
  }
  return typeof value === "number" ? json(value, { detail: "server error" }) : json(200, value);
}

/** Stubs the global fetch; a route whose value is a number answers that status, an unknown path 404. */
export function mockApi(routes: ApiRoutes) {
  const fetchMock = vi.fn((input: RequestInfo | URL, init?: RequestInit) => {
    const url = urlOf(input);
    const method = methodOf(input, init);
    const value = routes[`${method} ${url.pathname}`] ?? routes[url.pathname];
    if (value === undefined) {
      return Promise.resolve(json(404, { detail: `no mock for ${method} ${url.pathname}` }));
    }
    const request = { method, url, body: parsedBody(init) };
    return value instanceof Promise ? value.then((held) => answer(held, request)) : Promise.resolve(answer(value, request));
  });
  vi.stubGlobal("fetch", fetchMock);
  return fetchMock;
}

export function requestedUrls(fetchMock: ReturnType<typeof mockApi>, path: string): URL[] {
  return fetchMock.mock.calls.map(([input]) => urlOf(input)).filter((url) => url.pathname === path);
}

/** The requests (method, URL, body) the page sent to one path, in order. */
export function requests(fetchMock: ReturnType<typeof mockApi>, path: string, method?: string): MockRequest[] {
  return fetchMock.mock.calls
    .map(([input, init]) => ({ method: methodOf(input, init), url: urlOf(input), body: parsedBody(init) }))
    .filter((request) => request.url.pathname === path && (method === undefined || request.method === method));
}
