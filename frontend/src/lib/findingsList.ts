// What the Findings page says of each finding: the path page link that shows it, and how long
// it has lasted. Plain functions of the API's data.
import type { Finding } from "../api/queries";
import { TIME_RANGES } from "./timeRange";
import { withFamily } from "./family";

/** The windows the page filters by (seconds back from now; null for all time). */
export const FINDING_WINDOWS: readonly { key: string; label: string; seconds: number | null }[] = [
  { key: "24h", label: "24 hours", seconds: 24 * 3600 },
  { key: "7d", label: "7 days", seconds: 7 * 86_400 },
  { key: "30d", label: "30 days", seconds: 30 * 86_400 },
  { key: "all", label: "All time", seconds: null },
];
export const DEFAULT_FINDING_WINDOW = "7d";

export function findingWindow(key: string | null): { key: string; label: string; seconds: number | null } {
  return (
    FINDING_WINDOWS.find((option) => option.key === key) ??
    FINDING_WINDOWS.find((option) => option.key === DEFAULT_FINDING_WINDOW) ?? { key: "all", label: "All time", seconds: null }
  );
}

const MARGIN_MS = 3600 * 1000;

/**
 * The path page at the finding: `from`/`to` span it with an hour either side, and `range` is
 * the smallest of the page's ranges that reaches back to its start, for a page that reads only
 * a range.
 */
export function findingHref(finding: Finding, now: Date): string {
  const start = new Date(finding.started_at).getTime() - MARGIN_MS;
  const end = Math.min(
    finding.cleared_at === null ? now.getTime() : new Date(finding.cleared_at).getTime() + MARGIN_MS,
    now.getTime(),
  );
  const back = (now.getTime() - start) / 1000;
  const range = TIME_RANGES.find((option) => option.seconds >= back) ?? TIME_RANGES[TIME_RANGES.length - 1];
  const params = new URLSearchParams({
    range: range?.key ?? "30d",
    from: new Date(start).toISOString(),
    to: new Date(end).toISOString(),
  });
  return `/paths/${finding.source.id}/${finding.destination.id}?${withFamily(params, finding.family).toString()}`;
}

/** How long a finding lasted, or has lasted so far: "2 h 5 min", "open 3 d". */
export function findingDuration(finding: Finding, now: Date): string {
  const end = finding.cleared_at === null ? now.getTime() : new Date(finding.cleared_at).getTime();
  const seconds = Math.max(0, (end - new Date(finding.started_at).getTime()) / 1000);
  const text =
    seconds < 90
      ? `${String(Math.round(seconds))} s`
      : seconds < 90 * 60
        ? `${String(Math.round(seconds / 60))} min`
        : seconds < 48 * 3600
          ? `${(seconds / 3600).toFixed(1)} h`
          : `${(seconds / 86_400).toFixed(1)} d`;
  return finding.cleared_at === null ? `open ${text}` : text;
}
