// The time windows a path chart can show, and their round trip through the URL.

export interface TimeRange {
  key: string;
  label: string;
  seconds: number;
}

export const TIME_RANGES: readonly TimeRange[] = [
  { key: "1h", label: "1 hour", seconds: 3600 },
  { key: "6h", label: "6 hours", seconds: 6 * 3600 },
  { key: "24h", label: "24 hours", seconds: 24 * 3600 },
  { key: "7d", label: "7 days", seconds: 7 * 86_400 },
  { key: "30d", label: "30 days", seconds: 30 * 86_400 },
];

export const DEFAULT_RANGE_KEY = "1h";

/** The range named in the URL, or the default one for a missing or unknown name. */
export function rangeFromKey(key: string | null): TimeRange {
  const found = TIME_RANGES.find((range) => range.key === key);
  if (found !== undefined) {
    return found;
  }
  const fallback = TIME_RANGES.find((range) => range.key === DEFAULT_RANGE_KEY);
  if (fallback === undefined) {
    throw new Error("the default time range is not in TIME_RANGES");
  }
  return fallback;
}
