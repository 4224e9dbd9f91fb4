import { useMemo } from "react";
import { Link, useParams, useSearchParams } from "react-router-dom";

import { useRttSeries } from "../api/queries";
import { PlotlyChart } from "../components/PlotlyChart";
import { LoadError, Loading } from "../components/QueryState";
import { formatDuration, formatMs, formatPercent, formatUtc } from "../lib/format";
import { rttLayout, rttTraces, summarize } from "../lib/rttTraces";
import { TIME_RANGES, rangeFromKey } from "../lib/timeRange";
import { PathAnalysisSection } from "./PathAnalysisSection";
import { FailedRunsPanel } from "./path/FailedRunsPanel";
import { pathHref } from "./PathsPage";

/** The most points the chart asks for; the server buckets any range down to this. */
const MAX_POINTS = 1500;

/** One direction of one path: its RTT over time, the runs that failed, then the analysis of its throughput. */
export function PathPage() {
  const { source = "", destination = "" } = useParams();
  return (
    <>
      <RttSection source={source} destination={destination} />
      <FailedRunsPanel source={source} destination={destination} />
      {/* A new path starts from the server's default goal and volume. */}
      <PathAnalysisSection key={`${source}/${destination}`} source={source} destination={destination} />
    </>
  );
}

/** RTT over time for one direction of one path: min and median per bucket, and loss. */
function RttSection({ source, destination }: { source: string; destination: string }) {
  const [params, setParams] = useSearchParams();
  const range = rangeFromKey(params.get("range"));
  const series = useRttSeries({ source, destination, rangeS: range.seconds, maxPoints: MAX_POINTS });

  const traces = useMemo(
    () => (series.data === undefined ? [] : rttTraces(series.data.points, series.data.bucket_s)),
    [series.data],
  );
  const start = series.data?.start ?? "";
  const end = series.data?.end ?? "";
  const layout = useMemo(() => rttLayout(start, end), [start, end]);

  if (series.isPending) {
    return <Loading what="the RTT series" />;
  }
  if (series.isError) {
    return <LoadError what="the RTT series" error={series.error} />;
  }
  const data = series.data;
  const summary = summarize(data.points);

  return (
    <section>
      <p className="crumbs">
        <Link to="/paths">Paths</Link> /
      </p>
      <h1>
        {data.source.name} → {data.destination.name}
      </h1>
      <p className="muted">
        Round-trip time measured by {data.source.name} towards {data.destination.name}.{" "}
        <Link to={pathHref(destination, source) + (params.has("range") ? `?range=${range.key}` : "")}>
          Reverse direction ({data.destination.name} → {data.source.name})
        </Link>
      </p>

      <div className="toolbar" role="group" aria-label="Time range">
        {TIME_RANGES.map((option) => (
          <button
            key={option.key}
            type="button"
            aria-pressed={option.key === range.key}
            onClick={() => {
              setParams({ range: option.key });
            }}
          >
            {option.label}
          </button>
        ))}
        {series.isFetching && <span className="muted">refreshing…</span>}
      </div>

      <dl className="figures">
        <div>
          <dt>Lowest RTT</dt>
          <dd>{formatMs(summary.minMs)}</dd>
        </div>
        <div>
          <dt>Latest median</dt>
          <dd>{formatMs(summary.latestMedianMs)}</dd>
        </div>
        <div>
          <dt>Loss</dt>
          <dd>
            {formatPercent(summary.lossFraction)}{" "}
            <span className="muted">
              ({summary.lost} of {summary.sent} packets)
            </span>
          </dd>
        </div>
        <div>
          <dt>Bucket</dt>
          <dd>{formatDuration(data.bucket_s)}</dd>
        </div>
      </dl>

      {data.points.length === 0 ? (
        <p className="muted" data-testid="rtt-empty">
          No samples between {formatUtc(data.start)} and {formatUtc(data.end)}.
        </p>
      ) : (
        <PlotlyChart
          data={traces}
          layout={layout}
          uiRevision={`${source}/${destination}/${range.key}`}
          testId="rtt-chart"
        />
      )}
    </section>
  );
}
