// The one RTT trace builder: every chart of RTT over time (a path's history, a target, an
// incident's window) draws the same min, p10-p90 band, median and loss, in the same colours,
// and breaks its lines where no bucket came back.
import type { Data, Layout } from "plotly.js";

import type { RttPoint } from "../api/queries";

/** One bucket of pings: RTT figures of its replies, in ms, and its loss. */
export interface RttBucket {
  t: string;
  min: number | null;
  p10: number | null;
  p50: number | null;
  p90: number | null;
  /** lost / sent, 0..1 */
  loss: number;
  lost: number;
  sent: number;
  /** Pings sent while Fathom's own throughput test loaded either host, left out of the rest. */
  own_load?: number;
}

/** How the loss bar's tooltip names the pings a bucket left out, if any. */
export function ownLoadNote(ownLoad: number | undefined): string {
  return ownLoad ? `; ${ownLoad} during Fathom's own tests left out` : "";
}

export const RTT_COLORS = {
  band: "rgba(44, 160, 44, 0.2)",
  median: "#2ca02c",
  min: "#1b5e20",
  loss: "rgba(214, 39, 40, 0.6)",
} as const;

/** Markers while the points are few: a line of two buckets on a day's axis is invisible. */
const MARKERS_UP_TO = 200;

/**
 * The points with a null row wherever consecutive buckets are more than one and a half widths
 * apart: the server returns only buckets that hold samples, and a line drawn across a gap would
 * hide that the agent was silent.
 */
export function withGaps<T extends { t: string }>(points: readonly T[], bucketS: number): (T | null)[] {
  const out: (T | null)[] = [];
  let previous: number | null = null;
  for (const point of points) {
    const ms = new Date(point.t).getTime();
    if (previous !== null && ms - previous > 1.5 * bucketS * 1000) {
      out.push(null);
    }
    out.push(point);
    previous = ms;
  }
  return out;
}

/** Each row's time; a gap row sits one bucket after the point before it. */
export function gapTimes(rows: readonly ({ t: string } | null)[], bucketS: number): string[] {
  let last = "";
  return rows.map((row) => {
    if (row === null) {
      return last === "" ? "" : new Date(new Date(last).getTime() + bucketS * 1000).toISOString();
    }
    last = row.t;
    return row.t;
  });
}

/** The buckets of `/paths/rtt/` (min and median only) in the shape every RTT chart draws. */
export function bucketsOf(points: readonly RttPoint[]): RttBucket[] {
  return points.map((point) => ({
    t: point.time,
    min: point.rtt_min_ms,
    p10: null,
    p50: point.rtt_median_ms,
    p90: null,
    loss: point.loss_fraction ?? (point.sent > 0 ? point.lost / point.sent : 0),
    lost: point.lost,
    sent: point.sent,
  }));
}

/** Min, p10-p90 band and median on the RTT axis; loss as bars on its own axis. */
export function rttTraces(
  points: readonly RttBucket[],
  bucketS: number,
  axes: { rtt: string; loss: string } = { rtt: "y", loss: "y2" },
): Data[] {
  const rows = withGaps(points, bucketS);
  const x = gapTimes(rows, bucketS);
  const line = { type: "scatter", x, yaxis: axes.rtt, connectgaps: false } as const;
  return [
    { ...line, mode: "lines", y: rows.map((r) => r?.p10 ?? null), line: { width: 0 }, showlegend: false,
      hoverinfo: "skip" },
    { ...line, mode: "lines", y: rows.map((r) => r?.p90 ?? null), line: { width: 0 }, fill: "tonexty",
      fillcolor: RTT_COLORS.band, name: "RTT p10–p90", hovertemplate: "p90 %{y:.2f} ms<extra></extra>" },
    { ...line, mode: points.length > MARKERS_UP_TO ? "lines" : "lines+markers", y: rows.map((r) => r?.p50 ?? null),
      name: "RTT median", line: { color: RTT_COLORS.median, width: 1.5 }, marker: { size: 4 },
      hovertemplate: "median %{y:.2f} ms<extra></extra>" },
    { ...line, mode: "lines", y: rows.map((r) => r?.min ?? null), name: "RTT min",
      line: { color: RTT_COLORS.min, width: 1, dash: "dot" }, hovertemplate: "min %{y:.2f} ms<extra></extra>" },
    { type: "bar", x: points.map((p) => p.t), y: points.map((p) => p.loss * 100), name: "loss",
      marker: { color: RTT_COLORS.loss }, yaxis: axes.loss,
      customdata: points.map((p) => [p.lost, p.sent, ownLoadNote(p.own_load)]),
      hovertemplate: "%{y:.2f} %% (%{customdata[0]} of %{customdata[1]}%{customdata[2]})<extra>loss</extra>" },
  ] as Data[];
}  // prettier-ignore

/** The layout for a window from start to end: the x axis spans it even where data is sparse. */
export function rttLayout(start: string, end: string): Partial<Layout> {
  return {
    margin: { l: 60, r: 60, t: 10, b: 40 },
    hovermode: "x unified",
    legend: { orientation: "h", y: 1.08, x: 0 },
    xaxis: { type: "date", range: [start, end], title: { text: "time (UTC)" } },
    yaxis: { title: { text: "RTT (ms)" }, rangemode: "tozero" },
    yaxis2: {
      title: { text: "loss (%)" },
      overlaying: "y",
      side: "right",
      range: [0, 100],
      dtick: 25,
      showgrid: false,
    },
    bargap: 0,
  };
}
