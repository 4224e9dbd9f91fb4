// What every analysis panel shares: the one query that feeds them all, its loading and error
// states in each panel's own words, and what to do while no throughput run is analysed.
import type { ReactNode } from "react";
import type { UseQueryResult } from "@tanstack/react-query";

import type { PathAnalysis } from "../../api/queries";
import { LoadError, Loading } from "../../components/QueryState";

export type AnalysisQuery = UseQueryResult<PathAnalysis>;

export const NO_RUN_HINT =
  "No throughput run analysed yet: the default mesh runs one every 6 h, and each is analysed within a minute " +
  "of arriving. For runs from before the analysis existed, run python manage.py analyze --hours 24 on the server.";

/** The shared query's loading and error states, in the words of one panel. */
export function AnalysisState({
  analysis,
  what,
  children,
}: {
  analysis: AnalysisQuery;
  what: string;
  children: (data: PathAnalysis) => ReactNode;
}) {
  if (analysis.isPending) {
    return <Loading what={what} />;
  }
  if (analysis.isError) {
    return <LoadError what={what} error={analysis.error} />;
  }
  return <div className={analysis.isPlaceholderData ? "stale" : undefined}>{children(analysis.data)}</div>;
}
