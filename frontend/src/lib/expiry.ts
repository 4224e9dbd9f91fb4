// Expiry choices for the tokens the UI issues.

const HOUR_S = 3600;
const DAY_S = 24 * HOUR_S;

/** How long an enrolment token stays usable: long enough to reach the endpoint, no longer. */
export const ENROLMENT_EXPIRIES = [
  { label: "1 hour", seconds: HOUR_S },
  { label: "24 hours", seconds: DAY_S },
  { label: "7 days", seconds: 7 * DAY_S },
] as const;

export type ApiTokenExpiry = "30d" | "90d" | "1y" | "longest" | "date";

export const API_TOKEN_EXPIRIES: readonly { value: ApiTokenExpiry; label: string }[] = [
  { value: "30d", label: "30 days" },
  { value: "90d", label: "90 days" },
  { value: "1y", label: "1 year" },
  { value: "longest", label: "the longest allowed" },
  { value: "date", label: "on a date…" },
];

const EXPIRY_DAYS: Record<Exclude<ApiTokenExpiry, "longest" | "date">, number> = { "30d": 30, "90d": 90, "1y": 365 };

/**
 * The expires_at an API token is created with: an ISO time, or null for the longest this site
 * allows (FATHOM_API_TOKEN_MAX_DAYS, a year by default; the server sets it). A date
 * (YYYY-MM-DD) means the start of that day, UTC; it is sent as chosen, even in the past,
 * so the server's own refusal reaches the person. An empty or unreadable date is
 * undefined: the form says so before sending.
 */
export function apiTokenExpiresAt(choice: ApiTokenExpiry, date: string, now: Date = new Date()): string | null | undefined {
  if (choice === "longest") {
    return null;
  }
  if (choice === "date") {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) {
      return undefined;
    }
    const at = new Date(`${date}T00:00:00Z`);
    return Number.isNaN(at.getTime()) ? undefined : at.toISOString();
  }
  return new Date(now.getTime() + EXPIRY_DAYS[choice] * DAY_S * 1000).toISOString();
}
