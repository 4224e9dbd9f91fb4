// What the path page draws over its history besides the rollups (GET /analysis/path/timeline/):
// each throughput run with its ceilings, tuning and iperf3 changes, ECMP modes and findings.
import { useQuery } from "@tanstack/react-query";

import { withFamily } from "../lib/family";
import { apiGet, type Schemas } from "./client";
import { ANALYSIS_REFRESH_MS } from "./queries";

export type PathTimeline = Schemas["PathTimeline"];
export type TimelineRun = Schemas["TimelineRun"];
export type TimelineSweep = Schemas["TimelineSweep"];
export type TimelineFinding = Schemas["TimelineFinding"];
export type TimelineTuningChange = Schemas["TimelineTuningChange"];

/** The same range as the history's (`live`: leave `to` out, so the server reads up to its now). */
export function usePathTimeline(
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
    queryKey: ["timeline", source, destination, fromIso, toIso, family] as const,
    queryFn: () => {
      const params = withFamily(new URLSearchParams({ source, destination, from: fromIso }), family);
      if (!live) {
        params.set("to", toIso);
      }
      return apiGet<PathTimeline>(`/analysis/path/timeline/?${params.toString()}`);
    },
    refetchInterval: ANALYSIS_REFRESH_MS,
    placeholderData: (previous) => previous,
  });
}
