// The path page's time range and its round trip through the URL: a named range back from now
// (`range=7d`) or an explicit one (`from=...&to=...`, what a zoom or a finding's link sets).
export interface HistoryRangeOption {
  key: string;
  label: string;
  seconds: number;
}

export const HISTORY_RANGES: readonly HistoryRangeOption[] = [
  { key: "1h", label: "1 hour", seconds: 3600 },
  { key: "6h", label: "6 hours", seconds: 6 * 3600 },
  { key: "24h", label: "24 hours", seconds: 86_400 },
  { key: "7d", label: "7 days", seconds: 7 * 86_400 },
  { key: "30d", label: "30 days", seconds: 30 * 86_400 },
  { key: "90d", label: "90 days", seconds: 90 * 86_400 },
  { key: "1y", label: "1 year", seconds: 365 * 86_400 },
];
export const DEFAULT_HISTORY_RANGE = "24h";

export interface HistoryRange {
  from: Date;
  to: Date;
  /** The named range, or null for an explicit one. */
  key: string | null;
  label: string;
  /** Why the URL's range was not used as given (shown above the chart); null when it was. */
  problem: string | null;
  /** Seconds from its start to now: for the lists that read "since then". */
  backS: number;
  /** It ends now: the server reads up to its own now (`to` is held to the minute here). */
  live: boolean;
}

function named(key: string, now: Date, problem: string | null = null): HistoryRange {
  const option = HISTORY_RANGES.find((item) => item.key === key) ?? HISTORY_RANGES[2];
  const seconds = option?.seconds ?? 86_400;
  return {
    from: new Date(now.getTime() - seconds * 1000),
    to: now,
    key: option?.key ?? DEFAULT_HISTORY_RANGE,
    label: `the last ${option?.label ?? "24 hours"}`,
    problem,
    backS: seconds,
    live: true,
  };
}

function parse(value: string | null): Date | null {
  if (value === null || value === "") {
    return null;
  }
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

export function formatRangeLabel(from: Date, to: Date): string {
  const short = (date: Date) => date.toISOString().slice(0, 16).replace("T", " ");
  return `${short(from)} – ${short(to)} UTC`;
}

/**
 * The range the URL names. A link with a broken, reversed or empty range falls back to the
 * named (or default) range and says why; one reaching into the future is cut at now.
 */
export function rangeFromParams(params: URLSearchParams, now: Date): HistoryRange {
  const key = params.get("range") ?? DEFAULT_HISTORY_RANGE;
  const rawFrom = params.get("from");
  const rawTo = params.get("to");
  if (rawFrom === null && rawTo === null) {
    if (!HISTORY_RANGES.some((option) => option.key === key)) {
      return named(DEFAULT_HISTORY_RANGE, now, `“${key}” is not a range: showing the last 24 hours.`);
    }
    return named(key, now);
  }
  const from = parse(rawFrom);
  const to = rawTo === null ? now : parse(rawTo);
  if (from === null || to === null) {
    return named(key, now, "The link's time range is not a valid time: showing the default range instead.");
  }
  if (from.getTime() >= to.getTime()) {
    return named(key, now, "The link's range ends before it starts: showing the default range instead.");
  }
  if (from.getTime() >= now.getTime()) {
    return named(key, now, "The link's range lies in the future, where there is no data yet.");
  }
  const live = to.getTime() >= now.getTime();
  const end = live ? now : to;
  return {
    from,
    to: end,
    key: null,
    label: formatRangeLabel(from, end),
    problem: null,
    backS: Math.ceil((now.getTime() - from.getTime()) / 1000),
    live,
  };
}

/** The URL for a named range (explicit bounds dropped). */
export function namedRangeParams(params: URLSearchParams, key: string): URLSearchParams {
  const next = new URLSearchParams(params);
  next.delete("from");
  next.delete("to");
  next.set("range", key);
  return next;
}

/** The URL for explicit bounds (a zoom, a custom range). */
export function explicitRangeParams(params: URLSearchParams, from: Date, to: Date): URLSearchParams {
  const next = new URLSearchParams(params);
  next.set("from", from.toISOString());
  next.set("to", to.toISOString());
  return next;
}
