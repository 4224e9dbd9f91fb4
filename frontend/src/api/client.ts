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

  /** A 400's per-field messages ({"role": ["..."]} -> {role: "..."}); empty for other errors. */
  get fieldErrors(): Record<string, string> {
    return this.status === 400 ? fieldErrors(this.responseBody) : {};
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
    const fieldErrors = Object.entries(record)
      .filter(([, value]) => Array.isArray(value) || typeof value === "string")
      .map(([field, value]) => `${field}: ${Array.isArray(value) ? value.map(String).join(" ") : String(value)}`);
    if (fieldErrors.length > 0) {
      return fieldErrors.join("; ");
    }
  }
  if (typeof body === "string" && body.trim() !== "" && body.length < 300) {
    return body.trim();
  }
  return `the server answered HTTP ${status}`;
}

/** DRF's validation body as one message per field; "detail" and non-field errors stay out. */
export function fieldErrors(body: unknown): Record<string, string> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return {};
  }
  const errors: Record<string, string> = {};
  for (const [field, value] of Object.entries(body as Record<string, unknown>)) {
    if (field === "detail") {
      continue;
    }
    if (Array.isArray(value)) {
      const texts = value.filter((item): item is string => typeof item === "string");
      if (texts.length > 0) {
        errors[field] = texts.join(" ");
      }
    } else if (typeof value === "string") {
      errors[field] = value;
    }
  }
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

export function apiPatch<T>(path: string, body: unknown): Promise<T> {
  return request<T>("PATCH", path, body);
}

export function apiDelete<T = null>(path: string): Promise<T> {
  return request<T>("DELETE", path);
}
