// A path's routes (GET /paths/routes/): each ECMP member's hops, the routes each trace run
// saw, and when that set changed.
import { useQuery } from "@tanstack/react-query";

import { withFamily } from "../lib/family";
import { apiGet, type Schemas } from "./client";
import { ANALYSIS_REFRESH_MS } from "./queries";

export type PathRoutes = Schemas["PathRoutes"];
export type Route = Schemas["Route"];
export type RouteHop = Schemas["RouteHop"];

export function usePathRoutes(source: string, destination: string, rangeS: number, family: number = 4) {
  return useQuery({
    queryKey: ["routes", source, destination, String(rangeS), family] as const,
    queryFn: () => {
      const params = new URLSearchParams({
        source,
        destination,
        start: new Date(Date.now() - rangeS * 1000).toISOString(),
      });
      withFamily(params, family);
      return apiGet<PathRoutes>(`/paths/routes/?${params.toString()}`);
    },
    refetchInterval: ANALYSIS_REFRESH_MS,
    placeholderData: (previous) => previous,
  });
}
