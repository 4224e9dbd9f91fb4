// A path's latency test (TWAMP-light): one-way delay and loss each way, in time buckets
// (GET /paths/latency/), for the path page's shared time axis.
import { useQuery } from "@tanstack/react-query";

import { withFamily } from "../lib/family";
import { apiGet, type Schemas } from "./client";
import { REFRESH_MS } from "./queries";

export type PathLatency = Schemas["PathLatencySeries"];
export type LatencyPoint = PathLatency["points"][number];

/**
 * Intervals last a minute by default: buckets finer than that would each hold one interval or
 * none, and the chart would break its lines between them. So no more buckets than minutes.
 */
const FINEST_BUCKET_S = 60;

/** `live`: the range ends now, so the request leaves `end` out (the server reads to its now). */
export function usePathLatency(
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
    queryKey: ["latency", source, destination, fromIso, toIso, family] as const,
    queryFn: () => {
      const minutes = Math.floor((to.getTime() - from.getTime()) / 1000 / FINEST_BUCKET_S);
      const maxPoints = String(Math.min(1000, Math.max(2, minutes)));
      const params = withFamily(
        new URLSearchParams({ source, destination, start: fromIso, max_points: maxPoints }),
        family,
      );
      if (!live) {
        params.set("end", toIso);
      }
      return apiGet<PathLatency>(`/paths/latency/?${params.toString()}`);
    },
    refetchInterval: REFRESH_MS,
    placeholderData: (previous) => previous,
  });
}
