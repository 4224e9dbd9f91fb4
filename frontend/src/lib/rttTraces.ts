// Turns the server's bucketed RTT series into Plotly traces and a summary line.
import type { Data, Layout } from "plotly.js";

import type { RttPoint } from "../api/queries";

export const COLORS = {
  min: "#1f77b4",
  median: "#ff7f0e",
  loss: "rgba(214, 39, 40, 0.55)",
} as const;

export interface PlotPoints {
  time: (string | null)[];
  min: (number | null)[];
  median: (number | null)[];
  lossPercent: (number | null)[];
}

/**
 * Columns for Plotly, with a null row wherever consecutive buckets are more than one and a
 * half widths apart: the server returns only buckets that hold samples, and a line drawn
 * across a gap would hide that the agent was silent.
 */
export function toPlotPoints(points: readonly RttPoint[], bucketS: number): PlotPoints {
  const out: PlotPoints = { time: [], min: [], median: [], lossPercent: [] };
  let previousMs: number | null = null;
  for (const point of points) {
    const ms = new Date(point.time).getTime();
    if (previousMs !== null && ms - previousMs > 1.5 * bucketS * 1000) {
      const gapMs = previousMs + bucketS * 1000;
      out.time.push(new Date(gapMs).toISOString());
      out.min.push(null);
      out.median.push(null);
      out.lossPercent.push(null);
    }
    out.time.push(point.time);
    out.min.push(point.rtt_min_ms);
    out.median.push(point.rtt_median_ms);
    out.lossPercent.push(point.loss_fraction === null ? null : point.loss_fraction * 100);
    previousMs = ms;
  }
  return out;
}

export function rttTraces(points: readonly RttPoint[], bucketS: number): Data[] {
  const columns = toPlotPoints(points, bucketS);
  const mode = points.length > 300 ? "lines" : "lines+markers";
  return [
    {
      type: "scatter",
      mode,
      name: "min RTT",
      x: columns.time,
      y: columns.min,
      line: { color: COLORS.min, width: 1.5 },
      marker: { size: 4 },
      connectgaps: false,
      hovertemplate: "%{y:.3f} ms<extra>min</extra>",
    },
    {
      type: "scatter",
      mode,
      name: "median RTT",
      x: columns.time,
      y: columns.median,
      line: { color: COLORS.median, width: 1.5 },
      marker: { size: 4 },
      connectgaps: false,
      hovertemplate: "%{y:.3f} ms<extra>median</extra>",
    },
    {
      type: "bar",
      name: "loss",
      x: columns.time,
      y: columns.lossPercent,
      yaxis: "y2",
      marker: { color: COLORS.loss },
      hovertemplate: "%{y:.2f} %<extra>loss</extra>",
    },
  ];
}

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

export interface RttSummary {
  minMs: number | null;
  latestMedianMs: number | null;
  sent: number;
  lost: number;
  lossFraction: number | null;
}

/** Figures over the whole window: the lowest RTT seen, the newest median, packet loss. */
export function summarize(points: readonly RttPoint[]): RttSummary {
  let minMs: number | null = null;
  let latestMedianMs: number | null = null;
  let sent = 0;
  let lost = 0;
  for (const point of points) {
    if (point.rtt_min_ms !== null && (minMs === null || point.rtt_min_ms < minMs)) {
      minMs = point.rtt_min_ms;
    }
    if (point.rtt_median_ms !== null) {
      latestMedianMs = point.rtt_median_ms;
    }
    sent += point.sent;
    lost += point.lost;
  }
  return { minMs, latestMedianMs, sent, lost, lossFraction: sent > 0 ? lost / sent : null };
}
