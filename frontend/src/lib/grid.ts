// A mesh as a source x destination matrix: which pairs exist, and how each cell reads for the
// chosen metric against the mesh's thresholds. Everything a cell shows is computed here, once
// per response and metric, so the page renders 9,900 cells without a hook or a style per cell.
import type { Schemas } from "../api/client";
import type { AgentRef, Choice, GridCell, Mesh, MeshGrid } from "../api/queries";
import { formatDuration, formatMs, formatPercent, formatRate, formatUtc } from "./format";
import { withFamily } from "./family";

/** The thresholds the grid colours by: the mesh's, over the defaults. */
export type GridThresholds = Schemas["GridThresholdsNow"];
/** The thresholds an operator set for a mesh: only the keys set. */
export type StoredThresholds = Schemas["GridThresholds"];

export interface GridMatrix {
  /** Agents that send in at least one pair, in the server's order: the rows. */
  sources: AgentRef[];
  /** Agents that receive in at least one pair: the columns. */
  destinations: AgentRef[];
  cells: Map<string, GridCell>;
}

export function cellKey(sourceId: string, destinationId: string): string {
  return `${sourceId}>${destinationId}`;
}

/** Rows and columns from the response's agents, keeping only those that appear in a pair
 * (a disjoint mesh has senders that never receive). */
export function gridMatrix(grid: MeshGrid): GridMatrix {
  const cells = new Map<string, GridCell>();
  const sending = new Set<string>();
  const receiving = new Set<string>();
  for (const cell of grid.cells) {
    cells.set(cellKey(cell.source.id, cell.destination.id), cell);
    sending.add(cell.source.id);
    receiving.add(cell.destination.id);
  }
  return {
    sources: grid.agents.filter((agent) => sending.has(agent.id)),
    destinations: grid.agents.filter((agent) => receiving.has(agent.id)),
    cells,
  };
}

/** The rtt_mode_verdict value of a path whose flows take different RTTs (ECMP members). */
export const ECMP_VERDICT = "ecmp";

export const GRID_METRICS = [
  { value: "fraction", label: "Throughput / ceiling" },
  { value: "rate", label: "Throughput" },
  { value: "rtt", label: "RTT median" },
  { value: "loss", label: "Loss" },
  { value: "one_way_loss", label: "One-way loss" },
  { value: "modes", label: "RTT modes" },
  { value: "status", label: "Last run" },
] as const;

export type GridMetric = (typeof GRID_METRICS)[number]["value"];

/** The metric of the URL's `metric`, throughput against its ceiling when absent or unknown. */
export function parseMetric(value: string | null): GridMetric {
  return GRID_METRICS.find((metric) => metric.value === value)?.value ?? "fraction";
}

/** How a reading compares with the thresholds; "stale" and "none" say there is nothing current. */
export type Tone = "good" | "warn" | "bad" | "none" | "stale";

export interface Reading {
  text: string;
  tone: Tone;
}

/** "45s", "12m", "5h", "3d": an age that fits in a cell. */
export function compactAge(seconds: number): string {
  if (seconds < 90) {
    return `${Math.max(0, Math.round(seconds))}s`;
  }
  if (seconds < 90 * 60) {
    return `${Math.round(seconds / 60)}m`;
  }
  if (seconds < 48 * 3600) {
    return `${Math.round(seconds / 3600)}h`;
  }
  return `${Math.round(seconds / 86_400)}d`;
}

/** Higher is better (throughput): good from `good` on, bad at `bad` or under. */
function rising(value: number, good: number, bad: number): Tone {
  return value >= good ? "good" : value <= bad ? "bad" : "warn";
}

/** Lower is better (RTT, loss): warn from `warn` on, bad from `crit` on. */
function falling(value: number, warn: number, crit: number): Tone {
  return value >= crit ? "bad" : value >= warn ? "warn" : "good";
}

function compactPercent(fraction: number): string {
  const percent = fraction * 100;
  return percent === 0 || percent >= 10 ? `${Math.round(percent)}%` : `${Number(percent.toPrecision(2))}%`;
}

/** "3.1G", "940M": a rate that fits in a cell. */
export function compactRate(bps: number): string {
  const units: [number, string][] = [
    [1e12, "T"],
    [1e9, "G"],
    [1e6, "M"],
    [1e3, "k"],
  ];
  for (const [scale, unit] of units) {
    if (bps >= scale) {
      const value = bps / scale;
      return `${Number(value.toFixed(value >= 10 ? 0 : 1))}${unit}`;
    }
  }
  return `${Math.round(bps)}`;
}

const NONE: Reading = { text: "–", tone: "none" };

/** What one direction of a cell shows for `metric`: a short text and its tone. Stale data
 * reads as its age whatever the metric: its values no longer say what the path does. */
export function cellReading(cell: GridCell, metric: GridMetric, thresholds: GridThresholds): Reading {
  if (cell.stale && cell.data_age_s !== null) {
    return { text: compactAge(cell.data_age_s), tone: "stale" };
  }
  switch (metric) {
    case "fraction":
      return cell.fraction_of_ceiling === null
        ? NONE
        : {
            text: compactPercent(cell.fraction_of_ceiling),
            tone: rising(cell.fraction_of_ceiling, thresholds.fraction_good, thresholds.fraction_bad),
          };
    case "rate":
      return cell.rate_bps === null
        ? NONE
        : {
            text: compactRate(cell.rate_bps),
            tone: rising(cell.rate_bps, thresholds.rate_good_bps, thresholds.rate_bad_bps),
          };
    case "rtt":
      return cell.rtt_median_ms === null
        ? NONE
        : {
            text: cell.rtt_median_ms >= 10 ? `${Math.round(cell.rtt_median_ms)}` : cell.rtt_median_ms.toFixed(1),
            tone: falling(cell.rtt_median_ms, thresholds.rtt_warn_ms, thresholds.rtt_crit_ms),
          };
    case "loss":
      return cell.loss_fraction === null
        ? NONE
        : {
            text: compactPercent(cell.loss_fraction),
            tone: falling(cell.loss_fraction, thresholds.loss_warn, thresholds.loss_crit),
          };
    case "one_way_loss":
      // This direction's own loss (latency tests): the same loss thresholds as the pings' round trip.
      return cell.forward_loss_fraction === null
        ? NONE
        : {
            text: compactPercent(cell.forward_loss_fraction),
            tone: falling(cell.forward_loss_fraction, thresholds.loss_warn, thresholds.loss_crit),
          };
    case "modes":
      // One RTT mode is the plain case; more are ECMP members that take different times.
      return cell.mode_count === null
        ? NONE
        : { text: `${cell.mode_count}`, tone: cell.mode_count > 1 ? "warn" : "good" };
    case "status":
      if (cell.last_run_status === null) {
        return NONE;
      }
      return {
        text: cell.last_run_status,
        tone: cell.last_run_status === "ok" ? "good" : cell.last_run_status === "failed" ? "bad" : "warn",
      };
  }
}

/** The path page over the 24 hours up to the cell's newest data, so the link shows what the
 * cell shows even when it is stale; the path page's own range when there is no data. */
export function pathAtHref(sourceId: string, destinationId: string, newestAt: string | null, family = 4): string {
  const path = `/paths/${sourceId}/${destinationId}`;
  const to = newestAt === null ? Number.NaN : Date.parse(newestAt);
  const params = withFamily(new URLSearchParams(), family);
  if (!Number.isNaN(to)) {
    params.set("from", new Date(to - 86_400_000).toISOString());
    params.set("to", newestAt ?? "");
  }
  const query = params.toString();
  return query === "" ? path : `${path}?${query}`;
}

export interface Labels {
  diagnoses: readonly Choice[] | undefined;
  verdicts: readonly Choice[] | undefined;
}

function label(choices: readonly Choice[] | undefined, value: string | null): string {
  if (value === null) {
    return "none";
  }
  return choices?.find((choice) => choice.value === value)?.label ?? value;
}

function ecmpLabel(labels: Labels): { label: string; color: string } {
  const choice = labels.verdicts?.find((item) => item.value === ECMP_VERDICT);
  return { label: choice?.label ?? ECMP_VERDICT, color: choice?.color ?? "inherit" };
}

/** The newest of a cell's own times: what its link opens the path page at. */
function newestAt(cell: GridCell): string | null {
  const { last_run_at: run, measured_at: analysed } = cell;
  if (run === null || analysed === null) {
    return run ?? analysed;
  }
  return Date.parse(analysed) > Date.parse(run) ? analysed : run;
}

/** The tooltip of one direction: every figure behind the cell, each labelled. */
export function cellTitle(cell: GridCell, labels: Labels): string {
  const lines = [`${cell.source.name} → ${cell.destination.name}`];
  if (cell.last_run_at === null) {
    lines.push("no data: no run of any kind reported");
  } else {
    const age = cell.data_age_s === null ? "" : ` (${compactAge(cell.data_age_s)} ago)`;
    lines.push(`${cell.stale ? "STALE: newest data" : "newest data"} ${formatUtc(cell.last_run_at)}${age}`);
    lines.push(`last run: ${cell.last_run_test_type ?? "?"} ${cell.last_run_status ?? "?"}`);
  }
  if (cell.rate_bps === null) {
    lines.push("no throughput run analysed in the last 31 days");
  } else {
    const share = cell.fraction_of_ceiling === null ? "–" : formatPercent(cell.fraction_of_ceiling);
    lines.push(`${formatRate(cell.rate_bps)} of a ${formatRate(cell.ceiling_bps)} ceiling (${share})`);
    lines.push(`diagnosis: ${label(labels.diagnoses, cell.diagnosis)}, measured ${formatUtc(cell.measured_at)}`);
  }
  lines.push(
    cell.loss_fraction === null
      ? "no pings in the last hour"
      : `last hour: RTT median ${formatMs(cell.rtt_median_ms)}, loss ${formatPercent(cell.loss_fraction)}`,
  );
  lines.push(
    cell.forward_loss_fraction === null
      ? "no one-way loss: no latency interval without Fathom's own load in the last hour"
      : `last hour: one-way loss ${formatPercent(cell.forward_loss_fraction)} (latency test, unloaded)`,
  );
  const modes = `${cell.mode_count ?? "?"} RTT ${cell.mode_count === 1 ? "mode" : "modes"}`;
  lines.push(
    cell.rtt_mode_verdict === null
      ? "no flow sweep yet"
      : `${modes}: ${label(labels.verdicts, cell.rtt_mode_verdict)}`,
  );
  lines.push(`${cell.open_findings} open ${cell.open_findings === 1 ? "finding" : "findings"}`);
  return lines.join("\n");
}

/** One direction of a cell, ready to draw; its tooltip is built when pointed at (gridTitle). */
export interface GridHalf extends Reading {
  key: string;
  href: string;
  findings: number;
  /** The ECMP verdict's label and colour (from the API) when the path's RTT modes are ECMP members. */
  ecmp: { label: string; color: string } | null;
}

/** A cell of row A, column B: A -> B on top, the mirrored B -> A under it; null where the
 * mesh does not test that direction. */
export interface GridSquare {
  key: string;
  forward: GridHalf | null;
  reverse: GridHalf | null;
}

export interface GridRow {
  source: AgentRef;
  squares: GridSquare[];
}

export interface GridView {
  destinations: AgentRef[];
  rows: GridRow[];
  /** Each cell by cellKey, for its tooltip. */
  cells: Map<string, GridCell>;
  labels: Labels;
  /** Changes with every response and metric: a tooltip built for another is stale. */
  version: string;
}

function half(key: string, cell: GridCell, metric: GridMetric, grid: MeshGrid, labels: Labels): GridHalf {
  return {
    ...cellReading(cell, metric, grid.thresholds),
    key,
    href: pathAtHref(cell.source.id, cell.destination.id, newestAt(cell), cell.family),
    findings: cell.open_findings,
    ecmp: cell.rtt_mode_verdict === ECMP_VERDICT ? ecmpLabel(labels) : null,
  };
}

/** The grid of one address family: a dual-stack pair has a cell in each, and the matrix
 * shows one family at a time. */
export function familyGrid(grid: MeshGrid, family: number): MeshGrid {
  return { ...grid, cells: grid.cells.filter((cell) => cell.family === family) };
}

/** The whole matrix as the page draws it, for one metric: each direction built once, though
 * it shows in two cells (its own and its mirror's). */
export function gridView(grid: MeshGrid, metric: GridMetric, labels: Labels): GridView {
  const matrix = gridMatrix(grid);
  const halves = new Map<string, GridHalf>();
  for (const [key, cell] of matrix.cells) {
    halves.set(key, half(key, cell, metric, grid, labels));
  }
  return {
    destinations: matrix.destinations,
    rows: matrix.sources.map((source) => ({
      source,
      squares: matrix.destinations.map((destination) => ({
        key: destination.id,
        forward: halves.get(cellKey(source.id, destination.id)) ?? null,
        reverse: halves.get(cellKey(destination.id, source.id)) ?? null,
      })),
    })),
    cells: matrix.cells,
    labels,
    version: `${grid.generated_at} ${metric}`,
  };
}

/** The tooltip of the direction drawn under `key`, or null for an unknown key. */
export function gridTitle(view: GridView, key: string): string | null {
  const cell = view.cells.get(key);
  return cell === undefined ? null : cellTitle(cell, view.labels);
}

/** The legend's words for each tone of `metric` under `thresholds`. */
export function toneLegend(metric: GridMetric, thresholds: GridThresholds): [Tone, string][] {
  const t = thresholds;
  const stale: [Tone, string] = ["stale", `stale: nothing for ${formatDuration(t.stale_after_s)} (shows its age)`];
  const lossRanges: [Tone, string][] = [
    ["good", `under ${formatPercent(t.loss_warn)}`],
    ["warn", `from ${formatPercent(t.loss_warn)}`],
    ["bad", `from ${formatPercent(t.loss_crit)}`],
  ];
  const none: [Tone, string] = ["none", metric === "one_way_loss" ? "no data: no unloaded latency interval" : "no data"];
  const ranges: Record<GridMetric, [Tone, string][]> = {
    fraction: [
      ["good", `≥ ${formatPercent(t.fraction_good)} of the ceiling`],
      ["warn", "between"],
      ["bad", `≤ ${formatPercent(t.fraction_bad)}`],
    ],
    rate: [
      ["good", `≥ ${formatRate(t.rate_good_bps)}`],
      ["warn", "between"],
      ["bad", `≤ ${formatRate(t.rate_bad_bps)}`],
    ],
    rtt: [
      ["good", `under ${formatMs(t.rtt_warn_ms)}`],
      ["warn", `from ${formatMs(t.rtt_warn_ms)}`],
      ["bad", `from ${formatMs(t.rtt_crit_ms)}`],
    ],
    loss: lossRanges,
    one_way_loss: lossRanges,
    modes: [
      ["good", "one RTT mode"],
      ["warn", "several (ECMP members)"],
    ],
    status: [
      ["good", "ok"],
      ["warn", "missed"],
      ["bad", "failed"],
    ],
  };
  return [...ranges[metric], none, stale];
}

/** The mesh the grid opens on: the first enabled one, else the first; null without meshes. */
export function defaultMesh(meshes: readonly Mesh[]): string | null {
  return (meshes.find((mesh) => mesh.enabled !== false) ?? meshes[0])?.name ?? null;
}
