import { withFamily } from "../../lib/family";

/**
 * The path page of source -> destination in one family (IPv4 unless given), with extra query
 * parameters (PathsPage.tsx re-exports it for other modules). An IPv6 path's link says so.
 */
export function pathHref(sourceId: string, destinationId: string, family = 4, extra?: URLSearchParams): string {
  const query = withFamily(new URLSearchParams(extra), family).toString();
  return `/paths/${sourceId}/${destinationId}${query === "" ? "" : `?${query}`}`;
}
