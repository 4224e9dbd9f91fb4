// Builds the "throughput against its ceilings" chart: each run's rate coloured by its
// diagnosis, each run's ceiling at its minimum RTT as a step line, and today's ceiling of
// every RTT mode as a dashed line, so a rate far below its line stands out.
import type { Data, Layout } from "plotly.js";

import type { CeilingSet, CeilingsNow, Choice, RunAnalysis, RunCeilings } from "../api/queries";
import { TERM_TITLES, memberSentence } from "./analysis";
import { formatPercent, formatRate } from "./format";

/** For a diagnosis the choices do not list (or before they load): neutral, never a status colour. */
export const UNLISTED_COLOR = "#8c959f";
const RUN_CEILING_COLOR = "#3b4351";
const MODE_COLORS = ["#0969da", "#bc4c00", "#8250df", "#1a7f37", "#cf222e"] as const;
/** Hover lines are wrapped at about this many characters: Plotly does not wrap them. */
const HOVER_LINE_CHARS = 80;
/** How many evidence sentences the hover shows; the "What limits this path" panel has all. */
const HOVER_EVIDENCE_LINES = 2;

function escapeHtml(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** Breaks a sentence into lines of about `width` characters at spaces, for a Plotly hover. */
export function wrapForHover(text: string, width = HOVER_LINE_CHARS): string {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (word === "") {
      continue;
    }
    if (line !== "" && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  if (line !== "") {
    lines.push(line);
  }
  return lines.map(escapeHtml).join("<br>");
}

function byStart(a: RunAnalysis, b: RunAnalysis): number {
  return new Date(a.started_at).getTime() - new Date(b.started_at).getTime();
}

function rttText(rttMs: number | null): string {
  return rttMs === null ? "unknown RTT" : `${rttMs.toFixed(1)} ms`;
}

/** "mode 1: 7.9 ms -> 3.2 Gbit/s": the legend entry of one RTT mode's ceiling today. */
export function modeLineLabel(index: number, set: CeilingSet): string {
  return `mode ${index + 1}: ${rttText(set.rtt_ms)} -> ${formatRate(set.ceiling_bps)}`;
}

function runCeiling(run: RunAnalysis): { bps: number | null; hover: string } {
  const set = run.ceilings.at_min_rtt;
  const bps = set.ceiling_bps ?? run.ceiling_bps;
  if (bps === null) {
    return { bps: null, hover: "" };
  }
  const limit = set.limit === "unknown" ? "smallest term" : TERM_TITLES[set.limit];
  return { bps, hover: `ceiling ${formatRate(bps)}<br>${limit} at ${rttText(set.rtt_ms)}` };
}

function rateHover(run: RunAnalysis, label: string): string {
  const lines = [
    `<b>${escapeHtml(label)}</b>`,
    `${formatRate(run.rate_bps)} of ${formatRate(run.ceiling_bps)} (${formatPercent(run.fraction_of_ceiling)}), ` +
      `${run.streams} ${run.streams === 1 ? "stream" : "streams"}`,
  ];
  const member = memberSentence(run);
  if (member !== null) {
    lines.push(wrapForHover(member));
  }
  lines.push(...run.evidence.evidence.slice(0, HOVER_EVIDENCE_LINES).map((sentence) => wrapForHover(sentence)));
  if (run.evidence.not_converged) {
    lines.push("still rising at the end: the run may be too short");
  }
  return lines.join("<br>");
}

/** One marker trace per diagnosis, in the order the server lists them, so the legend is a key. */
function rateTraces(runs: readonly RunAnalysis[], diagnoses: readonly Choice[]): Data[] {
  const groups = new Map<string, RunAnalysis[]>();
  for (const run of runs) {
    if (run.rate_bps === null) {
      continue;
    }
    const group = groups.get(run.diagnosis);
    if (group === undefined) {
      groups.set(run.diagnosis, [run]);
    } else {
      group.push(run);
    }
  }
  const order = diagnoses.map((choice) => choice.value);
  const values = [...groups.keys()].sort((a, b) => {
    const ia = order.indexOf(a);
    const ib = order.indexOf(b);
    return (ia === -1 ? order.length : ia) - (ib === -1 ? order.length : ib) || a.localeCompare(b);
  });
  return values.map((value): Data => {
    const group = groups.get(value) ?? [];
    const choice = diagnoses.find((item) => item.value === value);
    const label = choice?.label ?? (value === "" ? "not diagnosed" : value);
    return {
      type: "scatter",
      mode: "markers",
      name: label,
      legendgroup: "rate",
      x: group.map((run) => run.started_at),
      y: group.map((run) => run.rate_bps),
      marker: { color: choice?.color ?? UNLISTED_COLOR, size: 9, line: { color: "#fff", width: 1 } },
      text: group.map((run) => rateHover(run, label)),
      hovertemplate: "%{text}<extra></extra>",
    };
  });
}

/**
 * Dashed lines at today's ceiling of each RTT mode; without modes (no flow sweep yet), one
 * line at the path's minimum RTT. A mode whose ceiling is unknown gets no line.
 */
function todayLines(today: RunCeilings | null, start: string, end: string): Data[] {
  if (today === null) {
    return [];
  }
  const atMinRtt = today.at_min_rtt;
  const lines =
    today.per_mode.length > 0
      ? today.per_mode.map((set, index) => ({ set, label: modeLineLabel(index, set) }))
      : [{ set: atMinRtt, label: `now: ${rttText(atMinRtt.rtt_ms)} -> ${formatRate(atMinRtt.ceiling_bps)}` }];
  return lines.flatMap(({ set, label }, index): Data[] => {
    if (set.ceiling_bps === null) {
      return [];
    }
    const limit = set.limit === "unknown" ? "" : ` (${TERM_TITLES[set.limit]})`;
    return [
      {
        type: "scatter",
        mode: "lines",
        name: label,
        legendgroup: "now",
        x: [start, end],
        y: [set.ceiling_bps, set.ceiling_bps],
        line: { color: MODE_COLORS[index % MODE_COLORS.length] ?? RUN_CEILING_COLOR, width: 1.5, dash: "dash" },
        hovertemplate: `${escapeHtml(label + limit)} with today's tuning<extra></extra>`,
      },
    ];
  });
}

/**
 * Traces for the runs (newest first, as the API sends them) and today's ceilings. Without a
 * run there is no time axis, so the result is empty and the panel says what to do instead.
 */
export function ceilingTraces(
  runs: readonly RunAnalysis[],
  ceilingsNow: CeilingsNow | null,
  diagnoses: readonly Choice[] | undefined,
  now: Date = new Date(),
): Data[] {
  if (runs.length === 0) {
    return [];
  }
  const sorted = [...runs].sort(byStart);
  const first = sorted[0]?.started_at ?? now.toISOString();
  const last = sorted[sorted.length - 1]?.started_at ?? first;
  // Today's ceilings hold from the oldest run up to now, whichever is later than the newest run.
  const lineEnd = new Date(Math.max(new Date(last).getTime(), now.getTime())).toISOString();

  const ceilings = sorted.map(runCeiling);
  const traces: Data[] = [];
  if (ceilings.some((ceiling) => ceiling.bps !== null)) {
    traces.push({
      type: "scatter",
      mode: "lines+markers",
      name: "ceiling of each run",
      x: sorted.map((run) => run.started_at),
      y: ceilings.map((ceiling) => ceiling.bps),
      line: { color: RUN_CEILING_COLOR, width: 1.5, shape: "hv" },
      marker: { size: 4, color: RUN_CEILING_COLOR },
      connectgaps: false,
      text: ceilings.map((ceiling) => ceiling.hover),
      hovertemplate: "%{text}<extra></extra>",
    });
  }

  traces.push(...todayLines(ceilingsNow, first, lineEnd));
  traces.push(...rateTraces(sorted, diagnoses ?? []));
  return traces;
}

export function ceilingLayout(): Partial<Layout> {
  return {
    margin: { l: 80, r: 20, t: 10, b: 40 },
    hovermode: "closest",
    legend: { orientation: "h", y: -0.15, x: 0 },
    xaxis: { type: "date", title: { text: "run start (UTC)" } },
    yaxis: { title: { text: "rate" }, rangemode: "tozero", tickformat: "~s", ticksuffix: "bit/s" },
  };
}
