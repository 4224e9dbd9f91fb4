// A path's history (GET /paths/history/: rollups at the resolution the range needs) and its
// findings in the same window, for the path page's shared time axis.
import { useQuery } from "@tanstack/react-query";

import { apiGet } from "./client";
import { ANALYSIS_REFRESH_MS, REFRESH_MS, type Finding } from "./queries";
import type { PathHistory } from "../lib/historyFigure";

/**
 * `live`: the range ends now, so the request leaves `to` out and the server reads up to its
 * own now (the page's `to` is held to the minute to keep the query key still, and would cut
 * off what arrived since).
 */
export function usePathHistory(source: string, destination: string, from: Date, to: Date, live: boolean) {
  const fromIso = from.toISOString();
  const toIso = live ? "now" : to.toISOString();
  return useQuery({
    queryKey: ["history", source, destination, fromIso, toIso] as const,
    queryFn: () => {
      const params = new URLSearchParams({ source, destination, from: fromIso });
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
export function usePathFindings(source: string, destination: string, from: Date, to: Date, live: boolean) {
  const fromIso = from.toISOString();
  const toIso = live ? "now" : to.toISOString();
  return useQuery({
    queryKey: ["findings", "path", source, destination, fromIso, toIso] as const,
    queryFn: () => {
      const params = new URLSearchParams({ source, destination, since: fromIso, limit: "200" });
      if (!live) {
        params.set("until", toIso);
      }
      return apiGet<Finding[]>(`/analysis/findings/?${params.toString()}`);
    },
    refetchInterval: ANALYSIS_REFRESH_MS,
    placeholderData: (previous) => previous,
  });
}
