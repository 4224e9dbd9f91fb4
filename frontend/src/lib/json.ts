// Narrowing helpers for free-form JSON from the API: each takes anything and never throws.

/** The value as a plain object (not null, not an array), or null. */
export function asRecord(value: unknown): Record<string, unknown> | null {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : null;
}

/** The value when it is a finite number, else null. */
export function asNumber(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}
