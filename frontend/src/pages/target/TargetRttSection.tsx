// RTT to an external target over the page's range, on a time axis: min, p10-p90 band and
// median per bucket, loss below, failed runs marked with their reason, and with a latency test
// the delay and loss each way to the device's TWAMP-light reflector beneath. Read from raw data
// (targets have no rollups), so the range reaches back only as far as raw retention.
import { useMemo } from "react";

import type { TargetLatencySeries, TargetRttSeries, TargetRun } from "../../api/targetQueries";
import { Panel } from "../../components/Panel";
import { PlotlyChart } from "../../components/PlotlyChart";
import { LoadError } from "../../components/QueryState";
import { formatDuration, formatUtc } from "../../lib/format";
import type { HistoryRange } from "../../lib/historyRange";
import { rttTotals } from "../../lib/rttTotals";
import { failedRunsIn, targetRttFigure } from "../../lib/targets";
import { useRangeZoom } from "../../lib/useRangeZoom";
import { RttFigures } from "../path/RttFigures";

const CHART_HEIGHT = 420;
const LATENCY_ROWS_HEIGHT = 280;

export function TargetRttSection({
  series,
  latency = null,
  latencyError = null,
  runs,
  range,
}: {
  series: TargetRttSeries;
  /** The latency test's buckets, if the target has one and they have come. */
  latency?: TargetLatencySeries | null;
  latencyError?: Error | null;
  /** The newest runs of every kind: the failed ones in range are marked. */
  runs: readonly TargetRun[];
  range: HistoryRange;
}) {
  const failed = useMemo(() => failedRunsIn(runs, series.from, series.to), [runs, series.from, series.to]);
  const figure = useMemo(() => targetRttFigure(series, failed, latency), [series, failed, latency]);
  const onRelayout = useRangeZoom(range.key);
  const summary = rttTotals(series.points);
  const cut = new Date(series.from).getTime() > range.from.getTime() + 60_000;
  const hasPings = series.points.length > 0;
  const hasLatency = (latency?.points.length ?? 0) > 0;
  const measuresLatency = series.latest.some((latest) => latest.test_type === "latency");

  let body;
  if (!hasPings && !hasLatency) {
    body =
      failed.length > 0 ? (
        <p className="warning" role="note" data-testid="target-rtt-only-failed">
          No ping of this target answered between {formatUtc(series.from)} and {formatUtc(series.to)}: {failed.length}{" "}
          {failed.length === 1 ? "run" : "runs"} failed in this range (their reasons are listed under Recent runs).
        </p>
      ) : (
        <p className="muted" data-testid="target-rtt-empty">
          No {measuresLatency ? "pings or latency intervals" : "pings"} of this target between {formatUtc(series.from)}{" "}
          and {formatUtc(series.to)}. Choose a longer range, or check that the list mesh naming it has an enabled ping
          {measuresLatency ? " or latency" : ""} test.
        </p>
      );
  } else {
    body = (
      <>
        {hasPings ? (
          <dl className="figures">
            <RttFigures totals={summary} bucketS={series.bucket_s} />
          </dl>
        ) : (
          <p className="muted" data-testid="target-rtt-no-pings">
            No pings of this target in this range: the chart shows its latency test only.
          </p>
        )}
        <PlotlyChart
          data={figure.data}
          layout={figure.layout}
          height={hasPings && hasLatency ? CHART_HEIGHT + LATENCY_ROWS_HEIGHT : CHART_HEIGHT}
          uiRevision={`${series.source.id}/${series.target}/${range.key ?? "custom"}`}
          testId="target-rtt-chart"
          onRelayout={onRelayout}
        />
        <p className="muted">
          One point per {formatDuration(series.bucket_s)} from raw data.
          {latency !== null && hasLatency && (
            <>
              {" "}
              The {hasPings ? "bottom rows are" : "chart is"} the latency test (TWAMP-light to the device&apos;s own
              reflector): one-way delay (median, min–p90 band) and loss in each direction. Where the device declares
              its clock unsynchronized, or the two clocks&apos; declared error exceeds {latency.clock_error_limit_ms}{" "}
              ms, the round trip stands in; loss each way always counts.
            </>
          )}{" "}
          Drag across the chart to zoom; double-click to zoom back out.
        </p>
      </>
    );
  }
  return (
    <Panel title="RTT and loss">
      {cut && (
        <p className="warning" role="note" data-testid="target-retention">
          Targets have no rollups: raw data is kept from {formatUtc(series.retained_from)} on, so the chart starts
          there.
        </p>
      )}
      {latencyError !== null && <LoadError what="the target's latency test" error={latencyError} />}
      {body}
    </Panel>
  );
}
