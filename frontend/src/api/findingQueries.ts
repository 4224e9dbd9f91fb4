// Findings across paths (the Findings page): GET /analysis/findings/ with the page's filters.
import { useQuery } from "@tanstack/react-query";

import { apiGet, type Schemas } from "./client";
import { ANALYSIS_REFRESH_MS, type Finding } from "./queries";

/** The most findings one request returns (the API's `limit` maximum). */
export const FINDINGS_LIMIT = 1000;

export interface FindingListQuery {
  metric: string | null;
  state: string | null;
  kind: string | null;
  mesh: string | null;
  /** "4" or "6": one address family's paths; null for both. */
  family: string | null;
  /** The window the findings overlap, in seconds back from now; null for all time. */
  windowS: number | null;
}

export const findingKeys = {
  list: (query: FindingListQuery) =>
    [
      "findings",
      query.metric ?? "",
      query.state ?? "",
      query.kind ?? "",
      query.mesh ?? "",
      query.family ?? "",
      String(query.windowS ?? ""),
    ] as const,
};

export function useFindingList(query: FindingListQuery) {
  return useQuery({
    queryKey: findingKeys.list(query),
    queryFn: () => {
      const params = new URLSearchParams({ limit: String(FINDINGS_LIMIT) });
      for (const key of ["metric", "state", "kind", "mesh", "family"] as const) {
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

export type FindingChanges = Schemas["FindingChanges"];

/** What else changed when a finding's change began (GET /analysis/findings/{id}/changes/). */
export function useFindingChanges(findingId: number) {
  return useQuery({
    queryKey: ["finding-changes", findingId] as const,
    queryFn: () => apiGet<FindingChanges>(`/analysis/findings/${findingId}/changes/`),
    refetchInterval: ANALYSIS_REFRESH_MS,
  });
}
