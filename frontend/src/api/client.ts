// A thin fetch wrapper: same-origin session cookies, Django's CSRF header on unsafe
// methods, and errors that carry the server's own message.
import type { components } from "./schema";

export type Schemas = components["schemas"];

const API_ROOT = "/api/v1";
const CSRF_COOKIE = "csrftoken";

export class ApiError extends Error {
  readonly status: number;
  /** The parsed error body, for forms that show each field's complaint beside the field. */
  readonly responseBody: unknown;

  constructor(status: number, message: string, body: unknown = null) {
    super(message);
    this.name = "ApiError";
    this.status = status;
    this.responseBody = body;
  }

  /**
   * A 400's messages by field path ({"role": ["..."]} -> {role: "..."}; "" for the request as
   * a whole; see flattenErrors); empty for other errors and for bodies that are not an object.
   */
  get fieldErrors(): Record<string, string> {
    const body = this.responseBody;
    return this.status === 400 && typeof body === "object" && body !== null && !Array.isArray(body)
      ? flattenErrors(body)
      : {};
  }

  /** The session is missing or expired: the UI sends the user to the login page. */
  get isUnauthenticated(): boolean {
    return this.status === 401 || this.status === 403;
  }
}

/** Turns an error response body into one readable sentence. */
export function errorMessage(status: number, body: unknown): string {
  if (typeof body === "object" && body !== null) {
    const record = body as Record<string, unknown>;
    if (typeof record.detail === "string") {
      return record.detail;
    }
    const messages = Object.entries(flattenErrors(body)).map(([path, message]) =>
      path === "" ? message : `${path}: ${message}`,
    );
    if (messages.length > 0) {
      return messages.join("; ");
    }
  }
  if (typeof body === "string" && body.trim() !== "" && body.length < 300) {
    return body.trim();
  }
  return `the server answered HTTP ${status}`;
}

function joinPath(path: string, key: string): string {
  return path === "" ? key : `${path}.${key}`;
}

function addMessage(errors: Record<string, string>, path: string, message: string) {
  const known = errors[path];
  errors[path] = known === undefined ? message : `${known} ${message}`;
}

function flattenInto(errors: Record<string, string>, path: string, body: unknown) {
  if (body === null || body === undefined) {
    return;
  }
  if (typeof body === "string" || typeof body === "number" || typeof body === "boolean") {
    addMessage(errors, path, String(body));
    return;
  }
  if (Array.isArray(body)) {
    // ["message", …] for the field itself; [{…}, {}] for the items of a list, by index.
    body.forEach((item: unknown, index) => {
      if (typeof item === "object" && item !== null) {
        flattenInto(errors, joinPath(path, String(index)), item);
      } else {
        flattenInto(errors, path, item);
      }
    });
    return;
  }
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    // DRF's errors of an object as a whole belong to the object's own path.
    const isWhole = key === "non_field_errors" || (key === "detail" && path === "");
    flattenInto(errors, isWhole ? path : joinPath(path, key), value);
  }
}

/**
 * DRF's error body as one message per field path, for forms that show each complaint beside
 * its field: {"tests": [{"spec": {"duration_s": ["…"]}}, {}]} gives "tests.0.spec.duration_s";
 * {"role": ["…", "…"]} gives "role" (the messages joined); "" holds what concerns the request
 * as a whole (non_field_errors, detail).
 */
export function flattenErrors(body: unknown): Record<string, string> {
  const errors: Record<string, string> = {};
  flattenInto(errors, "", body);
  return errors;
}

export function readCookie(cookieHeader: string, name: string): string | null {
  for (const part of cookieHeader.split(";")) {
    const [key, ...rest] = part.trim().split("=");
    if (key === name) {
      return decodeURIComponent(rest.join("="));
    }
  }
  return null;
}

async function csrfToken(): Promise<string> {
  const fromCookie = readCookie(document.cookie, CSRF_COOKIE);
  if (fromCookie !== null) {
    return fromCookie;
  }
  const response = await fetch(`${API_ROOT}/auth/csrf/`, { credentials: "same-origin" });
  const body = (await response.json()) as Schemas["Csrf"];
  return body.csrf_token;
}

async function parseBody(response: Response): Promise<unknown> {
  const text = await response.text();
  if (text === "") {
    return null;
  }
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (method !== "GET") {
    headers["X-CSRFToken"] = await csrfToken();
  }
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
  }
  let response: Response;
  try {
    response = await fetch(`${API_ROOT}${path}`, {
      method,
      headers,
      credentials: "same-origin",
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError(0, "the Fathom server cannot be reached");
  }
  const parsed = await parseBody(response);
  if (!response.ok) {
    throw new ApiError(response.status, errorMessage(response.status, parsed), parsed);
  }
  return parsed as T;
}

export function apiGet<T>(path: string): Promise<T> {
  return request<T>("GET", path);
}

export function apiPost<T>(path: string, body?: unknown): Promise<T> {
  return request<T>("POST", path, body);
}

export function apiPut<T>(path: string, body: unknown): Promise<T> {
  return request<T>("PUT", path, body);
}

export function apiPatch<T>(path: string, body: unknown): Promise<T> {
  return request<T>("PATCH", path, body);
}

export function apiDelete<T = null>(path: string): Promise<T> {
  return request<T>("DELETE", path);
}
