// Findings across paths (the Findings page): GET /analysis/findings/ with the page's filters.
import { useQuery } from "@tanstack/react-query";

import { apiGet } from "./client";
import { ANALYSIS_REFRESH_MS, type Finding } from "./queries";

/** The most findings one request returns (the API's `limit` maximum). */
export const FINDINGS_LIMIT = 1000;

export interface FindingListQuery {
  metric: string | null;
  state: string | null;
  kind: string | null;
  mesh: string | null;
  /** The window the findings overlap, in seconds back from now; null for all time. */
  windowS: number | null;
}

export const findingKeys = {
  list: (query: FindingListQuery) =>
    ["findings", query.metric ?? "", query.state ?? "", query.kind ?? "", query.mesh ?? "", String(query.windowS ?? "")] as const,
};

export function useFindingList(query: FindingListQuery) {
  return useQuery({
    queryKey: findingKeys.list(query),
    queryFn: () => {
      const params = new URLSearchParams({ limit: String(FINDINGS_LIMIT) });
      for (const key of ["metric", "state", "kind", "mesh"] as const) {
        const value = query[key];
        if (value !== null) {
          params.set(key, value);
        }
      }
      if (query.windowS !== null) {
        params.set("since", new Date(Date.now() - query.windowS * 1000).toISOString());
      }
      return apiGet<Finding[]>(`/analysis/findings/?${params.toString()}`);
    },
    refetchInterval: ANALYSIS_REFRESH_MS,
    placeholderData: (previous) => previous,
  });
}
