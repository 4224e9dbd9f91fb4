// One-way delay and loss of a path's latency test (TWAMP-light) as rows of the path's history:
// each direction's median with its clocks' uncertainty as error bars and a min–p90 band, and
// the loss of each direction on its own. A bucket whose clocks were not both synchronized within
// the server's limit has no one-way figures: its round trip stands in, drawn only then.
import type { Data } from "plotly.js";

import type { LatencyPoint } from "../api/latencyQueries";
import { gapTimes, withGaps } from "./rttTraces";

export interface LatencyAxes {
  delay: string;
  loss: string;
}

interface Direction {
  label: string;
  color: string;
  band: string;
  min: (point: LatencyPoint) => number | null;
  p50: (point: LatencyPoint) => number | null;
  p90: (point: LatencyPoint) => number | null;
  lossFraction: (point: LatencyPoint) => number | null;
  /** null where the direction was not measured (a one-way-only test: perfSONAR's latencybg) */
  lost: (point: LatencyPoint) => number | null;
}

const MARKERS_UP_TO = 200;
const ROUND_TRIP = "#6e7781";

/** The directions of a path measured from `source` towards `destination`. */
export function latencyDirections(source: string, destination: string, colors: { forward: string; reverse: string }): Direction[] {
  return [
    {
      label: `${source} → ${destination}`,
      color: colors.forward,
      band: "rgba(31, 119, 180, 0.12)",
      min: (p) => p.forward_min_ms,
      p50: (p) => p.forward_p50_ms,
      p90: (p) => p.forward_p90_ms,
      lossFraction: (p) => p.forward_loss_fraction,
      lost: (p) => p.forward_lost,
    },
    {
      label: `${destination} → ${source}`,
      color: colors.reverse,
      band: "rgba(255, 127, 14, 0.12)",
      min: (p) => p.backward_min_ms,
      p50: (p) => p.backward_p50_ms,
      p90: (p) => p.backward_p90_ms,
      lossFraction: (p) => p.backward_loss_fraction,
      lost: (p) => p.backward_lost,
    },
  ];
}

/** A bucket's one-way figure, or null where its clocks do not allow one. */
function trusted(point: LatencyPoint | null, value: (point: LatencyPoint) => number | null): number | null {
  return point === null || !point.one_way_trusted ? null : value(point);
}

function loadNote(point: LatencyPoint): string {
  return point.loaded ? " (during Fathom's own throughput test)" : "";
}

export function latencyTraces(
  points: readonly LatencyPoint[],
  bucketS: number,
  directions: readonly Direction[],
  axes: LatencyAxes,
): Data[] {
  const rows = withGaps(
    points.map((point) => ({ ...point, t: point.time })),
    bucketS,
  );
  const x = gapTimes(rows, bucketS);
  const mode = points.length > MARKERS_UP_TO ? "lines" : "lines+markers";
  const traces: Data[] = [];
  // A one-way-only test (perfSONAR's latencybg) measures no backward direction: no legend for it.
  const measured = directions.filter((direction) =>
    points.some((point) => direction.p50(point) !== null || direction.lossFraction(point) !== null),
  );
  for (const direction of measured) {
    traces.push(
      { type: "scatter", mode: "lines", x, y: rows.map((r) => trusted(r, direction.min)), line: { width: 0 },
        showlegend: false, hoverinfo: "skip", yaxis: axes.delay, connectgaps: false },
      { type: "scatter", mode: "lines", x, y: rows.map((r) => trusted(r, direction.p90)), line: { width: 0 },
        fill: "tonexty", fillcolor: direction.band, name: `${direction.label} one-way min–p90`, hoverinfo: "skip",
        yaxis: axes.delay, connectgaps: false },
      { type: "scatter", mode, x, y: rows.map((r) => trusted(r, direction.p50)), name: `${direction.label} one-way median`,
        line: { color: direction.color, width: 1.5 }, marker: { size: 4 }, yaxis: axes.delay, connectgaps: false,
        // The two clocks' summed error bound: how far the one-way figure can be off.
        error_y: { type: "data", array: rows.map((r) => (r === null || !r.one_way_trusted ? null : r.clock_error_ms)),
          visible: true, color: direction.color, thickness: 1, width: 2 },
        customdata: rows.map((r) => (r === null ? null : [r.clock_error_ms ?? 0, loadNote(r)])),
        hovertemplate: "%{y:.3f} ms ± %{customdata[0]:.3f} ms clocks%{customdata[1]}<extra>" + direction.label + "</extra>" } as Data,
    );
  }
  if (points.some((point) => !point.one_way_trusted)) {
    // Where the clocks cannot carry one-way figures, the round trip still can.
    traces.push({
      type: "scatter", mode, x, y: rows.map((r) => (r === null || r.one_way_trusted ? null : r.round_trip_p50_ms)),
      name: "round trip median (clocks not synchronized closely enough for one-way)", yaxis: axes.delay,
      line: { color: ROUND_TRIP, width: 1.5, dash: "dot" }, marker: { size: 4 }, connectgaps: false,
      customdata: rows.map((r) => (r === null ? null : [r.clock_error_ms ?? 0])),
      hovertemplate: "%{y:.3f} ms round trip; clocks ± %{customdata[0]:.3f} ms<extra></extra>",
    } as Data);
  }
  for (const direction of measured) {
    traces.push({
      type: "bar",
      x: points.map((p) => p.time),
      y: points.map((p) => {
        const fraction = direction.lossFraction(p);
        return fraction === null ? null : fraction * 100;
      }),
      name: `${direction.label} loss`,
      marker: { color: direction.color },
      yaxis: axes.loss,
      customdata: points.map((p) => [direction.lost(p) ?? "?", p.sent, loadNote(p)]),
      hovertemplate: "%{y:.2f} %: %{customdata[0]} of %{customdata[1]} lost on the way%{customdata[2]}<extra>" +
        direction.label + "</extra>",
    });
  }
  return traces;
}
