// A path's history (GET /paths/history/: rollups at the resolution the range needs) and its
// findings in the same window, for the path page's shared time axis.
import { useQuery } from "@tanstack/react-query";

import { apiGet } from "./client";
import { ANALYSIS_REFRESH_MS, REFRESH_MS, type Finding } from "./queries";
import { withFamily } from "../lib/family";
import type { PathHistory } from "../lib/historyFigure";

/**
 * `live`: the range ends now, so the request leaves `to` out and the server reads up to its
 * own now (the page's `to` is held to the minute to keep the query key still, and would cut
 * off what arrived since).
 */
export function usePathHistory(
  source: string,
  destination: string,
  from: Date,
  to: Date,
  live: boolean,
  family: number = 4,
) {
  const fromIso = from.toISOString();
  const toIso = live ? "now" : to.toISOString();
  return useQuery({
    queryKey: ["history", source, destination, fromIso, toIso, family] as const,
    queryFn: () => {
      const params = withFamily(new URLSearchParams({ source, destination, from: fromIso }), family);
      if (!live) {
        params.set("to", toIso);
      }
      return apiGet<PathHistory>(`/paths/history/?${params.toString()}`);
    },
    refetchInterval: REFRESH_MS,
    // The previous range stays drawn while the next one loads (a zoom, a range button).
    placeholderData: (previous) => previous,
  });
}

/** The path's findings that overlap the window, for the chart's shaded spans (`live` as above). */
export function usePathFindings(
  source: string,
  destination: string,
  from: Date,
  to: Date,
  live: boolean,
  family: number = 4,
) {
  const fromIso = from.toISOString();
  const toIso = live ? "now" : to.toISOString();
  return useQuery({
    queryKey: ["findings", "path", source, destination, fromIso, toIso, family] as const,
    queryFn: () => {
      // The filter names the family either way: the list would otherwise hold both families' findings.
      const params = new URLSearchParams({ source, destination, family: String(family), since: fromIso, limit: "200" });
      if (!live) {
        params.set("until", toIso);
      }
      return apiGet<Finding[]>(`/analysis/findings/?${params.toString()}`);
    },
    refetchInterval: ANALYSIS_REFRESH_MS,
    placeholderData: (previous) => previous,
  });
}
