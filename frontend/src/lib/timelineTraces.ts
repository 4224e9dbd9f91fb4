// The path timeline's traces for the history figure (pure): each throughput run as a marker
// (TCP, paced TCP, UDP and policer ramps apart; open for one stream, filled for several), the ceilings that
// applied to the runs as steps with a band from the ceiling under load to the one at min RTT,
// the ECMP modes as labelled RTT lines with their share of flows, and markers for tuning and
// iperf3 changes (the diff on hover) and for findings (a click opens the evidence).
import type { Data, Shape } from "plotly.js";

import type { Choices } from "../api/queries";
import type {
  PathTimeline,
  TimelineFinding,
  TimelineRun,
  TimelineSweep,
  TimelineTuningChange,
} from "../api/timelineQueries";
import { TERM_NAMES, TERM_TITLES, formatMagnitude, metricTitle, termTitle } from "./analysis";
import { changeRows, formatChangeValue } from "./changes";
import { formatRate } from "./format";

export type RunKind = "tcp" | "paced" | "udp" | "ramp";

const KIND_TITLES: Record<RunKind, string> = {
  tcp: "TCP runs",
  paced: "paced TCP runs",
  udp: "UDP runs",
  ramp: "policer ramps",
};
// Filled for several streams, open for one: the same symbol family per kind.
const KIND_SYMBOLS: Record<RunKind, string> = { tcp: "circle", paced: "square", udp: "diamond", ramp: "triangle-up" };
const MODE_COLORS = ["#6a3d9a", "#b15928", "#e7298a", "#1b9e77", "#666666"];
const TUNING = "#57606a";
const IPERF3 = "#9a6700";
const ALARM = "#cf222e";
const ANNOTATION = "#8250df";
// Two lanes on the changes row, so a finding at the moment of a retune does not hide it.
const CHANGE_LANE = 0.45;
const FINDING_LANE = -0.45;
/** Most change lines listed in one hover; the rest are counted. */
const HOVER_LINES = 8;

/** Whole percents: a hover has no room for 97.3 %. */
function percent(fraction: number | null): string {
  return fraction === null || !Number.isFinite(fraction) ? "–" : `${String(Math.round(fraction * 100))} %`;
}

export function runKind(run: TimelineRun): RunKind {
  if (run.ramp !== null) {
    return "ramp";
  }
  if (run.protocol === "udp") {
    return "udp";
  }
  return run.paced ? "paced" : "tcp";
}

function streamsText(streams: number | null): string {
  if (streams === null) {
    return "streams unknown";
  }
  return streams === 1 ? "1 stream" : `${String(streams)} streams`;
}

/** A ramp's hover: the policer's rate it measured, then each step offered -> delivered. */
function rampHover(run: TimelineRun, steps: NonNullable<TimelineRun["ramp"]>): string {
  const lines = [
    `policer ${run.ramp_lower_bound === true ? "at least" : "about"} ${formatRate(run.rate_bps)} (UDP ramp, ${String(steps.length)} steps)`,
    ...steps.map((step) => `offered ${formatRate(step.offered_bps)} → ${formatRate(step.delivered_bps)}, lost ${percent(step.lost_fraction)}`),
  ];
  if (run.iperf3_version !== "") {
    lines.push(`iperf3 ${run.iperf3_version} on ${run.client.name}`);
  }
  return lines.join("<br>");
}

/** What a run's marker says on hover: rate, kind and streams, then what bounded it. */
export function runHover(run: TimelineRun): string {
  if (run.ramp !== null) {
    return rampHover(run, run.ramp);
  }
  const kind = runKind(run);
  const lines = [`${formatRate(run.rate_bps)} ${kind === "udp" ? "UDP" : kind === "paced" ? "paced TCP" : "TCP"}, ${streamsText(run.streams)}`];
  if (kind === "udp") {
    lines.push(`offered ${formatRate(run.offered_bps)}, lost ${percent(run.lost_fraction)}`);
  }
  if (run.diagnosis !== null) {
    const fraction = run.rate_bps !== null && run.ceiling_bps ? run.rate_bps / run.ceiling_bps : null;
    lines.push(`${run.diagnosis.replaceAll("_", " ")}; ${percent(fraction)} of ${formatRate(run.ceiling_bps)} (${termTitle(run.limit ?? "unknown")})`);
  }
  if (run.iperf3_version !== "") {
    lines.push(`iperf3 ${run.iperf3_version} on ${run.client.name}`);
  }
  return lines.join("<br>");
}

/** One marker trace per kind present, in the direction's colour. */
export function runTraces(runs: readonly TimelineRun[], label: string, color: string, yaxis: string): Data[] {
  const traces: Data[] = [];
  for (const kind of ["tcp", "paced", "udp", "ramp"] as const) {
    const shown = runs.filter((run) => runKind(run) === kind && run.rate_bps !== null);
    if (shown.length === 0) {
      continue;
    }
    traces.push({
      type: "scatter",
      mode: "markers",
      name: `${label} ${KIND_TITLES[kind]}`,
      legendgroup: label,
      x: shown.map((run) => run.t),
      y: shown.map((run) => run.rate_bps),
      marker: {
        color,
        symbol: shown.map((run) => (run.streams !== null && run.streams > 1 ? KIND_SYMBOLS[kind] : `${KIND_SYMBOLS[kind]}-open`)),
        size: shown.map((run) => (run.streams !== null && run.streams > 1 ? 9 : 7)),
        line: { width: 1.5, color },
      },
      yaxis,
      hovertext: shown.map(runHover),
      hoverinfo: "x+text",
    });
  }
  return traces;
}

function ceilingHover(run: TimelineRun): string {
  const terms = TERM_NAMES.map((name) => `${TERM_TITLES[name]} ${formatRate(run.terms?.[name] ?? null)}`);
  return [
    `ceiling ${formatRate(run.ceiling_bps)} at min RTT (${termTitle(run.limit ?? "unknown")}), ${formatRate(run.ceiling_under_load_bps)} under load`,
    terms.join(" · "),
  ].join("<br>");
}

/**
 * Per stream count (the ceilings scale with it), the binding ceiling of each analysed TCP run
 * as a step held until the next run, with a band reaching to its ceiling at the mean RTT under load. A
 * retune shows as a step.
 */
export function ceilingTraces(runs: readonly TimelineRun[], label: string, color: string, band: string, yaxis: string): Data[] {
  const analysed = runs.filter((run) => run.protocol === "tcp" && run.ceiling_bps !== null);
  const counts = [...new Set(analysed.map((run) => run.streams))].sort((a, b) => (a ?? 0) - (b ?? 0));
  return counts.flatMap((streams) => {
    const shown = analysed.filter((run) => run.streams === streams);
    const name = counts.length > 1 ? `${label} ceiling (${streamsText(streams)})` : `${label} ceiling`;
    const x = shown.map((run) => run.t);
    return [
      { type: "scatter", mode: "lines", x, y: shown.map((run) => run.ceiling_under_load_bps ?? run.ceiling_bps),
        line: { width: 0, shape: "hv" }, showlegend: false, legendgroup: name, hoverinfo: "skip", yaxis },
      { type: "scatter", mode: "lines", name, legendgroup: name, x, y: shown.map((run) => run.ceiling_bps),
        line: { color, width: 1, dash: "dash", shape: "hv" }, fill: "tonexty", fillcolor: band, yaxis,
        hovertext: shown.map(ceilingHover), hoverinfo: "x+text" },
    ] as Data[];
  });
}

/** True when some sweep saw more than one mode: else the modes line would only repeat the RTT. */
export function hasEcmpModes(sweeps: readonly TimelineSweep[]): boolean {
  return sweeps.some((sweep) => sweep.modes.length > 1);
}

/** Mode k of every sweep as a labelled line on the RTT row, and its share of flows stacked on its own row. */
export function modeTraces(sweeps: readonly TimelineSweep[], rttAxis: string, shareAxis: string): Data[] {
  if (!hasEcmpModes(sweeps)) {
    return [];
  }
  const count = Math.max(...sweeps.map((sweep) => sweep.modes.length));
  const x = sweeps.map((sweep) => sweep.t);
  const traces: Data[] = [];
  for (let index = 0; index < count; index += 1) {
    const name = index === 0 ? "ECMP mode 1 (fastest)" : `ECMP mode ${String(index + 1)}`;
    const color = MODE_COLORS[index % MODE_COLORS.length] ?? TUNING;
    const modes = sweeps.map((sweep) => sweep.modes[index] ?? null);
    const hover = modes.map((mode) =>
      mode === null ? "" : `${name}: ${mode.rtt_ms?.toFixed(2) ?? "–"} ms, ${percent(mode.share)} of flows (${String(mode.flow_count)})`,
    );
    traces.push(
      { type: "scatter", mode: "lines+markers", name, legendgroup: name, x, y: modes.map((mode) => mode?.rtt_ms ?? null),
        line: { color, width: 1, dash: "dot" }, marker: { size: 5, color }, yaxis: rttAxis, connectgaps: false,
        hovertext: hover, hoverinfo: "x+text" },
      { type: "scatter", mode: "lines", name: `${name} share`, legendgroup: name, showlegend: false, x,
        y: modes.map((mode) => (mode?.share ?? 0) * 100), stackgroup: "ecmp-share", line: { color, width: 0.5 },
        fillcolor: color, yaxis: shareAxis, hovertext: hover, hoverinfo: "x+text" },
    );
  }
  return traces;
}

/** A tuning change as hover lines: "athens: net.ipv4.tcp_rmem 4096 131072 6291456 → …". */
export function tuningHover(change: TimelineTuningChange): string {
  const rows = changeRows(Object.fromEntries(
    Object.entries(change.changes).map(([key, pair]) => [key, [pair[0], pair[1]] as const]),
  ));
  const lines = rows.slice(0, HOVER_LINES).map((row) => `${row.field}: ${formatChangeValue(row.before, 40)} → ${formatChangeValue(row.after, 40)}`);
  if (rows.length > HOVER_LINES) {
    lines.push(`+${String(rows.length - HOVER_LINES)} more`);
  }
  return [`${change.agent.name}'s tuning changed`, ...lines].join("<br>");
}

export function findingHover(finding: TimelineFinding, forward: string, reverse: string, choices?: Choices): string {
  return [
    `${metricTitle(finding.metric, choices)} ${finding.direction} ${formatMagnitude(finding.magnitude, finding.unit)} (${finding.kind}, ${finding.state})`,
    finding.path_direction === "forward" ? forward : reverse,
    finding.annotation !== "" ? finding.annotation : null,
    "click for the evidence",
  ].filter((line) => line !== null).join("<br>");
}

/** The marker a click on a finding reports back: its customdata. */
const FINDING_MARK = "finding";

/** Tuning and iperf3 changes and findings as markers on the changes row. */
export function eventTraces(
  timeline: PathTimeline, forward: string, reverse: string, yaxis: string, choices?: Choices,
): Data[] {
  const traces: Data[] = [];
  if (timeline.tuning_changes.length > 0) {
    traces.push({ type: "scatter", mode: "markers", name: "tuning changes", x: timeline.tuning_changes.map((c) => c.t),
      y: timeline.tuning_changes.map(() => CHANGE_LANE), marker: { symbol: "triangle-down", size: 11, color: TUNING }, yaxis,
      hovertext: timeline.tuning_changes.map(tuningHover), hoverinfo: "x+text" });
  }
  if (timeline.iperf3_changes.length > 0) {
    traces.push({ type: "scatter", mode: "markers", name: "iperf3 changes", x: timeline.iperf3_changes.map((c) => c.t),
      y: timeline.iperf3_changes.map(() => CHANGE_LANE), marker: { symbol: "star", size: 12, color: IPERF3 }, yaxis,
      hovertext: timeline.iperf3_changes.map((c) => `iperf3 on ${c.agent.name}: ${c.old} → ${c.new}`),
      hoverinfo: "x+text" });
  }
  if (timeline.findings.length > 0) {
    traces.push({ type: "scatter", mode: "markers", name: "findings", x: timeline.findings.map((f) => f.started_at),
      y: timeline.findings.map(() => FINDING_LANE),
      marker: { symbol: "square", size: 10, color: timeline.findings.map((f) => (f.kind === "alarm" ? ALARM : ANNOTATION)) },
      yaxis, customdata: timeline.findings.map((f) => [FINDING_MARK, f.id]),
      hovertext: timeline.findings.map((f) => findingHover(f, forward, reverse, choices)), hoverinfo: "x+text" });
  }
  return traces;
}

/** A dotted line across every row at each tuning or iperf3 change, so the ceilings' steps line up with it. */
export function changeLines(timeline: PathTimeline): Partial<Shape>[] {
  const times = [...timeline.tuning_changes.map((c) => c.t), ...timeline.iperf3_changes.map((c) => c.t)];
  return times.map((t) => ({
    type: "line", xref: "x", yref: "paper", x0: t, x1: t, y0: 0, y1: 1, layer: "below",
    line: { color: "rgba(87, 96, 106, 0.5)", width: 1, dash: "dot" },
  }));
}

/** The finding a click landed on (Plotly's click points), or null for any other point. */
export function clickedFinding(points: readonly { customdata?: unknown }[]): number | null {
  for (const point of points) {
    const data = point.customdata;
    if (Array.isArray(data) && data[0] === FINDING_MARK && typeof data[1] === "number") {
      return data[1];
    }
  }
  return null;
}
