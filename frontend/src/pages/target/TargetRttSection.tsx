// RTT to an external target over the page's range, on a time axis: min, p10-p90 band and
// median per bucket, loss below, failed runs marked with their reason. Read from raw pings
// (targets have no rollups), so the range reaches back only as far as raw retention.
import { useMemo } from "react";

import type { TargetRttSeries, TargetRun } from "../../api/targetQueries";
import { Panel } from "../../components/Panel";
import { PlotlyChart } from "../../components/PlotlyChart";
import { formatDuration, formatUtc } from "../../lib/format";
import type { HistoryRange } from "../../lib/historyRange";
import { rttTotals } from "../../lib/rttTotals";
import { failedRunsIn, targetRttFigure } from "../../lib/targets";
import { useRangeZoom } from "../../lib/useRangeZoom";
import { RttFigures } from "../path/RttFigures";

const CHART_HEIGHT = 420;

export function TargetRttSection({
  series,
  runs,
  range,
}: {
  series: TargetRttSeries;
  /** The newest runs of every kind: the failed ones in range are marked. */
  runs: readonly TargetRun[];
  range: HistoryRange;
}) {
  const failed = useMemo(() => failedRunsIn(runs, series.from, series.to), [runs, series.from, series.to]);
  const figure = useMemo(() => targetRttFigure(series, failed), [series, failed]);
  const onRelayout = useRangeZoom(range.key);
  const summary = rttTotals(series.points);
  const cut = new Date(series.from).getTime() > range.from.getTime() + 60_000;

  let body;
  if (series.points.length === 0) {
    body =
      failed.length > 0 ? (
        <p className="warning" role="note" data-testid="target-rtt-only-failed">
          No ping of this target answered between {formatUtc(series.from)} and {formatUtc(series.to)}: {failed.length}{" "}
          {failed.length === 1 ? "run" : "runs"} failed in this range (their reasons are listed under Recent runs).
        </p>
      ) : (
        <p className="muted" data-testid="target-rtt-empty">
          No pings of this target between {formatUtc(series.from)} and {formatUtc(series.to)}. Choose a longer range,
          or check that the list mesh naming it has an enabled ping test.
        </p>
      );
  } else {
    body = (
      <>
        <dl className="figures">
          <RttFigures totals={summary} bucketS={series.bucket_s} />
        </dl>
        <PlotlyChart
          data={figure.data}
          layout={figure.layout}
          height={CHART_HEIGHT}
          uiRevision={`${series.source.id}/${series.target}/${range.key ?? "custom"}`}
          testId="target-rtt-chart"
          onRelayout={onRelayout}
        />
        <p className="muted">
          One point per {formatDuration(series.bucket_s)} from raw pings. Drag across the chart to zoom; double-click
          to zoom back out.
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
      {body}
    </Panel>
  );
}
