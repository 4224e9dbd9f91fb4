// RTT to an external target over the page's range, on a time axis: min, p10-p90 band and
// median per bucket, loss below, failed runs marked with their reason. Read from raw pings
// (targets have no rollups), so the range reaches back only as far as raw retention.
import { useCallback, useMemo } from "react";
import type { PlotRelayoutEvent } from "plotly.js";
import { useSearchParams } from "react-router-dom";

import type { TargetRttSeries, TargetRun } from "../../api/targetQueries";
import { Panel } from "../../components/Panel";
import { PlotlyChart } from "../../components/PlotlyChart";
import { formatDuration, formatMs, formatPercent, formatUtc } from "../../lib/format";
import { explicitRangeParams, namedRangeParams, type HistoryRange } from "../../lib/historyRange";
import { failedRunsIn, targetRttFigure } from "../../lib/targets";

const CHART_HEIGHT = 420;

/** The figures above the chart. */
export function rttSummary(series: TargetRttSeries) {
  const mins = series.points.map((point) => point.min).filter((value): value is number => value !== null);
  const sent = series.points.reduce((sum, point) => sum + point.sent, 0);
  const lost = series.points.reduce((sum, point) => sum + point.lost, 0);
  return {
    minRttMs: mins.length > 0 ? Math.min(...mins) : null,
    latestMedianMs: series.points.at(-1)?.p50 ?? null,
    lossFraction: sent > 0 ? lost / sent : null,
    sent,
    lost,
  };
}

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
  const [params, setParams] = useSearchParams();
  const failed = useMemo(() => failedRunsIn(runs, series.from, series.to), [runs, series.from, series.to]);
  const figure = useMemo(() => targetRttFigure(series, failed), [series, failed]);
  const onRelayout = useCallback(
    (event: PlotRelayoutEvent) => {
      const start = event["xaxis.range[0]"];
      const end = event["xaxis.range[1]"];
      if (start !== undefined && end !== undefined) {
        const from = new Date(`${String(start).replace(" ", "T")}Z`);
        const to = new Date(`${String(end).replace(" ", "T")}Z`);
        if (!Number.isNaN(from.getTime()) && !Number.isNaN(to.getTime()) && from < to) {
          setParams(explicitRangeParams(params, from, to), { replace: true });
        }
      } else if (event["xaxis.autorange"] === true && range.key === null) {
        setParams(namedRangeParams(params, params.get("range") ?? "24h"));
      }
    },
    [params, setParams, range.key],
  );
  const summary = rttSummary(series);
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
          <div>
            <dt>Lowest RTT</dt>
            <dd>{formatMs(summary.minRttMs)}</dd>
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
            <dt>Resolution</dt>
            <dd>{formatDuration(series.bucket_s)}</dd>
          </div>
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
