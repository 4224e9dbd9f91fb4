// A path's history as one Plotly figure on a shared time axis, rows top to bottom:
// throughput (median and min-max of each bucket's runs, both directions, failed runs marked),
// retransmits, RTT (min, p10-p90 band, median) and loss. Findings are shaded spans over all
// rows; the moments Fathom's own throughput tests loaded either host are grey spans over the
// ping rows (the analysis leaves those pings out). Zooming any row zooms them all: they share
// one x axis.
// With the path's timeline (lib/timelineTraces.ts) the throughput row also shows every run and
// its ceilings, the RTT row the ECMP modes, and two rows join: changes (tuning, iperf3,
// findings) on top and the modes' share of flows above loss. With a latency test, one-way delay
// and loss each way (lib/latencyTraces.ts) join at the bottom.
import type { Data, Layout, LayoutAxis, Shape } from "plotly.js";

import type { Schemas } from "../api/client";
import type { PathLatency } from "../api/latencyQueries";
import type { Choices, Finding } from "../api/queries";
import type { PathTimeline } from "../api/timelineQueries";
import { latencyDirections, latencyTraces } from "./latencyTraces";
import { gapTimes, rttTraces, withGaps } from "./rttTraces";
import { ceilingTraces, changeLines, eventTraces, hasEcmpModes, modeTraces, runTraces } from "./timelineTraces";

export type PathHistory = Schemas["PathHistory"];
export type HistoryThroughputPoint = PathHistory["throughput"][number];

/** A run that did not measure, as GET /paths/runs/?status=failed returns it. */
export interface FailedRunMark {
  started_at: string;
  test_type: string;
  status: string;
  error: string;
}

const FORWARD = "#1f77b4";
const REVERSE = "#ff7f0e";
/** Each direction's colour, for a chart of one path's two directions elsewhere (a target's). */
export const DIRECTION_COLORS = { forward: FORWARD, reverse: REVERSE } as const;
const FAILED = "#cf222e";
const FORWARD_BAND = "rgba(31, 119, 180, 0.08)";
const REVERSE_BAND = "rgba(255, 127, 14, 0.08)";
// Axis names stay fixed whichever rows are drawn (y..y4 as before the timeline rows joined).
const ROWS = {
  changes: { axis: "y5", weight: 0.06 },
  throughput: { axis: "y", weight: 0.3 },
  retransmits: { axis: "y2", weight: 0.1 },
  rtt: { axis: "y3", weight: 0.35 },
  share: { axis: "y6", weight: 0.1 },
  loss: { axis: "y4", weight: 0.13 },
  oneWay: { axis: "y7", weight: 0.3 },
  oneWayLoss: { axis: "y8", weight: 0.12 },
} as const;
type Row = keyof typeof ROWS;
const ROW_GAP = 0.04;

/** Each drawn row's [bottom, top] in paper units, top to bottom in ROWS' order, in proportion to their weights. */
export function rowDomains(rows: readonly Row[]): Partial<Record<Row, [number, number]>> {
  const ordered = (Object.keys(ROWS) as Row[]).filter((row) => rows.includes(row));
  const space = 1 - ROW_GAP * (ordered.length - 1);
  const total = ordered.reduce((sum, row) => sum + ROWS[row].weight, 0);
  const domains: Partial<Record<Row, [number, number]>> = {};
  let top = 1;
  for (const row of ordered) {
    const bottom = Math.max(0, top - (ROWS[row].weight / total) * space);
    domains[row] = [Number(bottom.toFixed(4)), Number(top.toFixed(4))];
    top = bottom - ROW_GAP;
  }
  return domains;
}

/**
 * Columns with a null row wherever buckets are more than one and a half widths apart, so a
 * line never bridges a time without data.
 */
/**
 * The shared x axis: it spans the data, not the whole range (a path measured for ten minutes
 * of a day's range would be a sliver at the right edge). Data within two buckets (one point,
 * a new path) would be stretched to fractions of a second, so it gets a bucket either side.
 */
export function spanningXAxis(times: readonly string[], bucketS: number, anchor: string): Partial<LayoutAxis> {
  const axis: Partial<LayoutAxis> = { type: "date", anchor: anchor as LayoutAxis["anchor"], title: { text: "UTC" } };
  let lo = Infinity;
  let hi = -Infinity;
  for (const time of times) {
    const ms = Date.parse(time);
    if (Number.isFinite(ms)) {
      lo = Math.min(lo, ms);
      hi = Math.max(hi, ms);
    }
  }
  const pad = bucketS * 1000;
  if (!Number.isFinite(lo) || hi - lo >= 2 * pad) {
    return { ...axis, autorange: true };
  }
  return { ...axis, range: [new Date(lo - pad).toISOString(), new Date(hi + pad).toISOString()] };
}

function throughputTraces(points: readonly HistoryThroughputPoint[], bucketS: number, label: string, color: string): Data[] {
  const rows = withGaps(points, bucketS);
  const x = gapTimes(rows, bucketS);
  const band = color === FORWARD ? "rgba(31, 119, 180, 0.15)" : "rgba(255, 127, 14, 0.15)";
  return [
    { type: "scatter", mode: "lines", x, y: rows.map((r) => r?.min_bps ?? null), line: { width: 0 }, showlegend: false,
      hoverinfo: "skip", yaxis: ROWS.throughput.axis, connectgaps: false },
    { type: "scatter", mode: "lines", x, y: rows.map((r) => r?.max_bps ?? null), line: { width: 0 }, fill: "tonexty",
      fillcolor: band, name: `${label} min–max`, hoverinfo: "skip", yaxis: ROWS.throughput.axis, connectgaps: false },
    { type: "scatter", mode: points.length > 200 ? "lines" : "lines+markers", x, y: rows.map((r) => r?.median_bps ?? null),
      name: `${label} throughput`, line: { color, width: 1.5 }, marker: { size: 5 }, yaxis: ROWS.throughput.axis,
      connectgaps: false,
      customdata: rows.map((r) => (r === null ? null : [r.runs_ok, r.runs_failed])),
      hovertemplate: "%{y:.3s}bit/s median of %{customdata[0]} runs (%{customdata[1]} failed)<extra>" + label + "</extra>" },
    { type: "bar", x: points.map((p) => p.t), y: points.map((p) => p.retransmits), name: `${label} retransmits`,
      marker: { color }, yaxis: ROWS.retransmits.axis, showlegend: false,
      hovertemplate: "%{y} retransmits<extra>" + label + "</extra>" },
  ] as Data[];
}

function failedTrace(failed: readonly FailedRunMark[]): Data[] {
  if (failed.length === 0) {
    return [];
  }
  return [
    {
      type: "scatter",
      mode: "markers",
      name: "failed runs",
      x: failed.map((run) => run.started_at),
      y: failed.map(() => 0),
      marker: { symbol: "x", size: 9, color: FAILED },
      yaxis: ROWS.throughput.axis,
      hovertext: failed.map((run) => `${run.test_type} ${run.status}: ${run.error === "" ? "no reason recorded" : run.error}`),
      hoverinfo: "x+text",
    },
  ];
}

function findingShapes(findings: readonly Pick<Finding, "started_at" | "cleared_at" | "kind">[], to: string): Partial<Shape>[] {
  return findings.map((finding) => ({
    type: "rect",
    xref: "x",
    yref: "paper",
    x0: finding.started_at,
    x1: finding.cleared_at ?? to,
    y0: 0,
    y1: 1,
    fillcolor: finding.kind === "alarm" ? "rgba(207, 34, 46, 0.08)" : "rgba(130, 80, 223, 0.08)",
    line: { width: 0 },
    layer: "below",
  }));
}

const OWN_LOAD = "rgba(110, 119, 129, 0.16)";
// Spans of own load are seconds long: on hour or day rollups they would be hairlines by the
// hundred, so they are drawn on minute rollups (ranges up to a day or so) only.
const OWN_LOAD_MAX_BUCKET_S = 60;

/** Grey spans over the ping rows (RTT down to loss) while a throughput test loaded either host. */
export function ownLoadShapes(
  spans: readonly { start: string; end: string }[],
  domains: Partial<Record<Row, [number, number]>>,
): Partial<Shape>[] {
  const top = domains.rtt?.[1];
  const bottom = domains.loss?.[0];
  if (top === undefined || bottom === undefined) {
    return [];
  }
  return spans.map((span) => ({
    type: "rect",
    xref: "x",
    yref: "paper",
    x0: span.start,
    x1: span.end,
    y0: bottom,
    y1: top,
    fillcolor: OWN_LOAD,
    line: { width: 0 },
    layer: "below",
  }));
}

/** A legend entry for the grey spans (shapes have none). */
function ownLoadLegend(): Data {
  return {
    type: "scatter",
    mode: "markers",
    x: [null],
    y: [null],
    name: "own throughput test on either host (pings left out of the analysis)",
    marker: { symbol: "square", size: 12, color: "rgba(110, 119, 129, 0.35)" },
    yaxis: ROWS.rtt.axis,
    hoverinfo: "skip",
  };
}

export function historyFigure(
  history: PathHistory,
  failed: readonly FailedRunMark[],
  findings: readonly Finding[],
  timeline: PathTimeline | null = null,
  choices?: Choices,
  latency: PathLatency | null = null,
): { data: Data[]; layout: Partial<Layout> } {
  const forward = `${history.source.name} → ${history.destination.name}`;
  const reverse = `${history.destination.name} → ${history.source.name}`;
  const runs = timeline === null ? [] : [...timeline.forward.runs, ...timeline.reverse.runs];
  const hasThroughput = history.throughput.length > 0 || history.reverse.throughput.length > 0 || runs.length > 0;
  const events = timeline === null ? [] : eventTraces(timeline, forward, reverse, ROWS.changes.axis, choices);
  // The RTT row is the forward pings: the forward sweeps' modes belong beside them.
  const modes = timeline === null ? [] : modeTraces(timeline.forward.sweeps, ROWS.rtt.axis, ROWS.share.axis);
  const latencyPoints = latency?.points ?? [];
  const hasPings = history.rtt.length > 0 || history.reverse.rtt.length > 0;
  // A path measured by its latency test alone (a perfSONAR node's latencybg towards an agent)
  // has no runs and no pings: empty throughput and RTT rows would only push its one-way rows down.
  const latencyOnly = latencyPoints.length > 0 && !hasThroughput && failed.length === 0 && !hasPings && modes.length === 0;
  const rows: Row[] = latencyOnly ? [] : ["throughput", "retransmits", "rtt", "loss"];
  if (events.length > 0) {
    rows.push("changes");
  }
  if (timeline !== null && hasEcmpModes(timeline.forward.sweeps)) {
    rows.push("share");
  }
  if (latencyPoints.length > 0) {
    rows.push("oneWay", "oneWayLoss");
  }
  const domains = rowDomains(rows);
  // The x axis sits under the bottom row drawn.
  const bottom = (Object.keys(ROWS) as Row[]).filter((row) => rows.includes(row)).at(-1) ?? "loss";
  const ownLoad = timeline !== null && history.bucket_s <= OWN_LOAD_MAX_BUCKET_S ? timeline.own_load : [];
  const data: Data[] = [
    ...(latencyOnly
      ? []
      : [
          ...throughputTraces(history.throughput, history.bucket_s, forward, FORWARD),
          ...throughputTraces(history.reverse.throughput, history.bucket_s, reverse, REVERSE),
        ]),
    ...(timeline === null
      ? []
      : [
          ...ceilingTraces(timeline.forward.runs, forward, FORWARD, FORWARD_BAND, ROWS.throughput.axis),
          ...ceilingTraces(timeline.reverse.runs, reverse, REVERSE, REVERSE_BAND, ROWS.throughput.axis),
          ...runTraces(timeline.forward.runs, forward, FORWARD, ROWS.throughput.axis),
          ...runTraces(timeline.reverse.runs, reverse, REVERSE, ROWS.throughput.axis),
        ]),
    ...failedTrace(failed),
    ...(latencyOnly ? [] : rttTraces(history.rtt, history.bucket_s, { rtt: ROWS.rtt.axis, loss: ROWS.loss.axis })),
    ...modes,
    ...events,
    // Its spans cover the ping rows: without them (a latency-only path) there is nothing to name.
    ...(ownLoad.length > 0 && rows.includes("rtt") ? [ownLoadLegend()] : []),
    ...(latency === null || latencyPoints.length === 0
      ? []
      : latencyTraces(
          latencyPoints,
          latency.bucket_s,
          latencyDirections(history.source.name, history.destination.name, { forward: FORWARD, reverse: REVERSE }),
          { delay: ROWS.oneWay.axis, loss: ROWS.oneWayLoss.axis },
        )),
  ];
  const axis = (row: Row, extra: Partial<LayoutAxis>): Partial<LayoutAxis> => ({ domain: domains[row] ?? [0, 1], ...extra });
  const layout: Partial<Layout> = {
    // Room above the changes row: Plotly's mode bar would cover its markers.
    margin: { l: 70, r: 10, t: rows.includes("changes") ? 30 : 10, b: 40 },
    hovermode: "closest",
    barmode: "group",
    // The legend sits below the axis title; on the short chart of one-way rows alone, 8 % of
    // its height is too little room and the two overlap.
    legend: { orientation: "h", y: latencyOnly ? -0.3 : -0.08 },
    // The range picker chooses what is read; the axis spans what came back.
    xaxis: spanningXAxis(
      [history.rtt, history.reverse.rtt, history.throughput, history.reverse.throughput]
        .flatMap((points) => points.map((point) => point.t))
        .concat(runs.map((run) => run.t))
        .concat(latencyPoints.map((point) => point.time)),
      history.bucket_s,
      ROWS[bottom].axis,
    ),
    ...(rows.includes("throughput")
      ? {
          // Without a run the axis would count single bits: show a gigabit's scale instead.
          yaxis: axis("throughput", { title: { text: "throughput" }, ticksuffix: "bit/s", tickformat: "~s",
            rangemode: "tozero", ...(hasThroughput ? {} : { range: [0, 1e9] }) }),
          yaxis2: axis("retransmits", { title: { text: "retr." }, rangemode: "tozero" }),
          yaxis3: axis("rtt", { title: { text: "RTT (ms)" } }),
          yaxis4: axis("loss", { title: { text: "loss %" }, rangemode: "tozero" }),
        }
      : {}),
    ...(rows.includes("changes")
      ? { yaxis5: axis("changes", { title: { text: "changes", font: { size: 10 } }, range: [-1, 1], fixedrange: true,
          showticklabels: false, showgrid: false, zeroline: false }) }
      : {}),
    ...(rows.includes("share")
      ? { yaxis6: axis("share", { title: { text: "flows %", font: { size: 10 } }, range: [0, 100], fixedrange: true }) }
      : {}),
    ...(rows.includes("oneWay")
      ? {
          yaxis7: axis("oneWay", { title: { text: "one-way (ms)" } }),
          yaxis8: axis("oneWayLoss", { title: { text: "loss % each way", font: { size: 10 } }, rangemode: "tozero" }),
        }
      : {}),
    shapes: [
      // The timeline's findings cover both directions; without it, the findings query's.
      ...findingShapes(timeline?.findings ?? findings, history.to),
      ...ownLoadShapes(ownLoad, domains),
      ...(timeline === null ? [] : changeLines(timeline)),
    ],
  };
  return { data, layout };
}
