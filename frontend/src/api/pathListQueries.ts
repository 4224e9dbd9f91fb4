// The Paths list: every path's current state (GET /analysis/paths/, optionally one mesh's) and
// the sparklines of the paths a page shows (GET /analysis/paths/spark/?pair=...).
import { useQueries, useQuery, type UseQueryResult } from "@tanstack/react-query";

import { apiGet, type Schemas } from "./client";
import { ANALYSIS_REFRESH_MS, queryKeys } from "./queries";
import { pairParam } from "../lib/pathList";

export type PathList = Schemas["PathList"];
export type PathListEntry = Schemas["PathSummary"];
export type PathSparks = Schemas["PathSparks"];
export type PathSpark = Schemas["Spark"];

/**
 * Pairs per spark request. The API takes up to 100, but 100 pairs make a ~8 KB request line
 * and gunicorn refuses lines over 4,094 bytes by default: 40 stay well under it.
 */
export const SPARK_PAIRS_PER_REQUEST = 40;

export const pathListKeys = {
  list: (mesh: string | null) => [...queryKeys.paths, "list", mesh ?? ""] as const,
  sparks: (pairs: readonly string[]) => [...queryKeys.paths, "spark", ...pairs] as const,
};

export function usePathList(mesh: string | null) {
  return useQuery({
    queryKey: pathListKeys.list(mesh),
    queryFn: () => {
      const query = mesh === null ? "" : `?${new URLSearchParams({ mesh }).toString()}`;
      return apiGet<PathList>(`/analysis/paths/${query}`);
    },
    refetchInterval: ANALYSIS_REFRESH_MS,
    // Switching meshes keeps the rows shown (dimmed) until the new ones arrive.
    placeholderData: (previous) => previous,
  });
}

/** Consecutive slices of at most `size` items. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  const slices: T[][] = [];
  for (let start = 0; start < items.length; start += size) {
    slices.push(items.slice(start, start + size));
  }
  return slices;
}

export interface SparkLookup {
  /** By pair (lib/pathList.ts pairParam); absent while its request is in flight. */
  byPair: ReadonlyMap<string, PathSpark>;
  isPending: boolean;
  /** The first failed request's error, null when none failed. */
  error: Error | null;
}

function combineSparks(results: UseQueryResult<PathSparks>[]): SparkLookup {
  const byPair = new Map<string, PathSpark>();
  for (const result of results) {
    for (const spark of result.data?.sparks ?? []) {
      byPair.set(pairParam({ source: { id: spark.source }, destination: { id: spark.destination }, family: spark.family }), spark);
    }
  }
  return {
    byPair,
    isPending: results.some((result) => result.isPending),
    error: results.find((result) => result.error !== null)?.error ?? null,
  };
}

/** The sparklines of the given pairs (the page's rows), a few requests of at most 40 pairs. */
export function usePathSparks(pairs: readonly string[]): SparkLookup {
  return useQueries({
    queries: chunks(pairs, SPARK_PAIRS_PER_REQUEST).map((slice) => ({
      queryKey: pathListKeys.sparks(slice),
      queryFn: () => {
        const params = new URLSearchParams(slice.map((pair) => ["pair", pair]));
        return apiGet<PathSparks>(`/analysis/paths/spark/?${params.toString()}`);
      },
      refetchInterval: ANALYSIS_REFRESH_MS,
      staleTime: 30_000,
    })),
    combine: combineSparks,
  });
}
