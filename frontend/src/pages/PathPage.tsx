import { useParams, useSearchParams } from "react-router-dom";

import { usePathHistory } from "../api/historyQueries";
import { usePlotlyAhead } from "../components/PlotlyChart";
import { familyFromParams } from "../lib/family";
import { formatUtc } from "../lib/format";
import { rangeFromParams } from "../lib/historyRange";
import { PathAnalysisSection } from "./PathAnalysisSection";
import { FailedRunsPanel } from "./path/FailedRunsPanel";
import { HistorySection } from "./path/HistorySection";
import { RoutesPanel } from "./path/RoutesPanel";

/** A minute-stable now: the range's query keys change once a minute, not on every render. */
function minuteNow(): Date {
  return new Date(Math.floor(Date.now() / 60_000) * 60_000);
}

/** One direction of one path: its history on one time axis, the runs that failed, its routes, then the analysis of its throughput. */
export function PathPage() {
  const { source = "", destination = "" } = useParams();
  const [params] = useSearchParams();
  const family = familyFromParams(params);
  const range = rangeFromParams(params, minuteNow());
  usePlotlyAhead();
  // "the last 24 hours", or "the range from ... on" for explicit bounds.
  const phrase = range.key === null ? `the range from ${formatUtc(range.from.toISOString())} on` : range.label;
  // The chart's data first: the panels below it ask once the history has answered, so that on
  // a first load their queries (the analysis is the slowest) do not share the server's and the
  // browser's cores with the chart's (make bench-ui). The same query as HistorySection's.
  const history = usePathHistory(source, destination, range.from, range.to, range.live, family);
  const ends = { source, destination, family };
  return (
    <>
      <HistorySection {...ends} range={range} />
      {!history.isPending && (
        <>
          <FailedRunsPanel {...ends} rangeS={range.backS} rangeLabel={phrase} />
          <RoutesPanel {...ends} rangeS={range.backS} rangeLabel={phrase} />
          {/* A new path starts from the server's default goal and volume. */}
          <PathAnalysisSection key={`${source}/${destination}/${String(family)}`} {...ends} />
        </>
      )}
    </>
  );
}
