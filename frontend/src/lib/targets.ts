// External targets (a list mesh's far ends, no agent there): their links, the rows of the
// targets table, and the target page's RTT figure on a time axis: min, p10-p90 band and
// median per bucket, loss in its own row, the runs that failed marked with their reason, and a
// latency test's delay and loss each way to the device's reflector below.
import type { Data, Layout, LayoutAxis } from "plotly.js";

import type { PathRoutes } from "../api/routeQueries";
import type { TargetLatencySeries, TargetPath, TargetRoutes, TargetRttSeries, TargetRun } from "../api/targetQueries";
import { DIRECTION_COLORS, rowDomains, spanningXAxis } from "./historyFigure";
import { latencyDirections, latencyTraces } from "./latencyTraces";
import { rttTraces } from "./rttTraces";

/** The target page of one agent -> target path. */
export function targetHref(sourceId: string, target: string): string {
  return `/targets/${encodeURIComponent(sourceId)}/${encodeURIComponent(target)}`;
}

/**
 * The server's spelling of a target (measurements.targets.normalize_target) for host names
 * and IPv4: lower case, no root dot. (IPv6 written unusually may still differ; the server
 * answers with its canonical form, which a mesh's list rarely differs from.)
 */
export function normalizeTarget(value: string): string {
  const text = value.trim();
  const bare = text.endsWith(".") && text.length > 1 ? text.slice(0, -1) : text;
  return bare.toLowerCase() || value;
}

/** Target -> the names of the list meshes that name it, for "in mesh …". */
export function meshesByTarget(meshes: readonly { name: string; targets?: string[] }[]): Map<string, string[]> {
  const named = new Map<string, string[]>();
  for (const mesh of meshes) {
    for (const target of mesh.targets ?? []) {
      const key = normalizeTarget(target);
      const names = named.get(key) ?? [];
      if (!names.includes(mesh.name)) {
        names.push(mesh.name);
      }
      named.set(key, names);
    }
  }
  return named;
}

/** Rows whose source, target or test types contain every word of the query (any case). */
export function filterTargets(rows: readonly TargetPath[], query: string): TargetPath[] {
  const words = query.toLowerCase().split(/\s+/).filter((word) => word !== "");
  if (words.length === 0) {
    return [...rows];
  }
  return rows.filter((row) => {
    const text = [row.source.name, row.target, ...row.test_types].join(" ").toLowerCase();
    return words.every((word) => text.includes(word));
  });
}

export interface RunCounts {
  ok: number;
  notOk: number;
  byStatus: Map<string, number>;
}

export function runCounts(runs: readonly TargetRun[]): RunCounts {
  const byStatus = new Map<string, number>();
  for (const run of runs) {
    byStatus.set(run.status, (byStatus.get(run.status) ?? 0) + 1);
  }
  const ok = byStatus.get("ok") ?? 0;
  return { ok, notOk: runs.length - ok, byStatus };
}

/** "12 ok, 3 failed, 1 missed" (ok first, then the commonest). */
export function runCountsText(runs: readonly TargetRun[]): string {
  const { byStatus } = runCounts(runs);
  return [...byStatus.entries()]
    .sort(([a, countA], [b, countB]) => (a === "ok" ? -1 : b === "ok" ? 1 : countB - countA || a.localeCompare(b)))
    .map(([status, count]) => `${String(count)} ${status}`)
    .join(", ");
}

function numberIn(summary: Record<string, unknown>, key: string): number | null {
  const value = summary[key];
  return typeof value === "number" ? value : null;
}

/** What a run found, in a few words: "median 8.1 ms, 0 % loss", "2 routes, 16 of 16 flows reached". */
export function runFindings(run: TargetRun): string {
  const summary = run.summary;
  if (run.status !== "ok") {
    return "";
  }
  if (run.test_type === "ping") {
    const median = numberIn(summary, "rtt_median_ms");
    const loss = numberIn(summary, "loss_fraction");
    return [median === null ? "no reply" : `median ${median.toFixed(2)} ms`, loss === null ? "" : `${(loss * 100).toFixed(1)} % loss`]
      .filter((part) => part !== "")
      .join(", ");
  }
  if (run.test_type === "trace") {
    const routes = numberIn(summary, "distinct_paths");
    const flows = numberIn(summary, "flows");
    const reached = numberIn(summary, "reached");
    if (routes === null || flows === null || reached === null) {
      return "";
    }
    return `${String(routes)} ${routes === 1 ? "route" : "routes"}, ${String(reached)} of ${String(flows)} flows reached`;
  }
  if (run.test_type === "latency") {
    const sent = numberIn(summary, "sent");
    const answered = numberIn(summary, "answered");
    const roundTrip = numberIn(summary, "round_trip_p50_ms");
    if (sent === null || answered === null) {
      return "";
    }
    return `${String(answered)} of ${String(sent)} answered${roundTrip === null ? "" : `, round trip median ${roundTrip.toFixed(2)} ms`}`;
  }
  if (run.test_type === "flowsweep") {
    const sent = numberIn(summary, "sent");
    const answered = numberIn(summary, "answered");
    const min = numberIn(summary, "rtt_min_ms");
    if (sent === null || answered === null) {
      return "";
    }
    return `${String(answered)} of ${String(sent)} probes answered${min === null ? "" : `, min ${min.toFixed(2)} ms`}`;
  }
  return "";
}

/** The runs that did not measure and started within [from, to]: the chart marks them. */
export function failedRunsIn(runs: readonly TargetRun[], from: string, to: string): TargetRun[] {
  const start = new Date(from).getTime();
  const end = new Date(to).getTime();
  return runs.filter((run) => {
    const at = new Date(run.started_at).getTime();
    return run.status !== "ok" && at >= start && at <= end;
  });
}

type FigureRow = Parameters<typeof rowDomains>[0][number];

const ROW_TITLES: Partial<Record<FigureRow, string>> = {
  rtt: "RTT (ms)",
  loss: "loss %",
  oneWay: "one-way (ms)",
  oneWayLoss: "loss % each way",
};

/**
 * The target's RTT and loss rows, and with a latency test the device's reflector's delay and
 * loss each way below them (lib/latencyTraces.ts, as on a path's page), on one time axis. Axes
 * are named in the order of the rows drawn: without pings the latency rows are the only ones.
 */
export function targetRttFigure(
  series: TargetRttSeries,
  failed: readonly TargetRun[],
  latency: TargetLatencySeries | null = null,
): { data: Data[]; layout: Partial<Layout> } {
  const points = series.points;
  const latencyPoints = latency?.points ?? [];
  const rows: FigureRow[] = [
    ...(points.length > 0 || latencyPoints.length === 0 ? (["rtt", "loss"] as const) : []),
    ...(latencyPoints.length > 0 ? (["oneWay", "oneWayLoss"] as const) : []),
  ];
  const axes = new Map(rows.map((row, index) => [row, index === 0 ? "y" : `y${String(index + 1)}`]));
  const axis = (row: FigureRow): string => axes.get(row) ?? "y";
  const bottom = rows[rows.length - 1] ?? "loss";
  const data: Data[] = points.length > 0 ? rttTraces(points, series.bucket_s, { rtt: axis("rtt"), loss: axis("loss") }) : [];
  if (latency !== null && latencyPoints.length > 0) {
    const directions = latencyDirections(series.source.name, series.target, DIRECTION_COLORS);
    data.push(
      ...latencyTraces(latencyPoints, latency.bucket_s, directions, { delay: axis("oneWay"), loss: axis("oneWayLoss") }),
    );
  }
  if (failed.length > 0) {
    data.push({
      type: "scatter",
      mode: "markers",
      name: "failed runs",
      x: failed.map((run) => run.started_at),
      y: failed.map(() => 0),
      marker: { symbol: "x", size: 9, color: "#cf222e" },
      yaxis: axis(rows.includes("loss") ? "loss" : "oneWayLoss"),
      hovertext: failed.map(
        (run) => `${run.test_type} ${run.status}: ${run.error === "" ? "no reason recorded" : run.error}`,
      ),
      hoverinfo: "x+text",
    });
  }
  const domains = rowDomains(rows);
  const yAxes: Record<string, Partial<LayoutAxis>> = {};
  for (const row of rows) {
    const name = axis(row).replace("y", "yaxis");
    yAxes[name] = {
      domain: domains[row] ?? [0, 1],
      title: { text: ROW_TITLES[row] ?? "" },
      ...(row === "loss" || row === "oneWayLoss" ? { rangemode: "tozero" } : {}),
    };
  }
  const layout: Partial<Layout> = {
    margin: { l: 70, r: 10, t: 10, b: 40 },
    hovermode: "closest",
    barmode: "group",
    legend: { orientation: "h", y: -0.15 },
    xaxis: spanningXAxis(
      points.map((point) => point.t).concat(latencyPoints.map((point) => point.time)),
      series.bucket_s,
      axis(bottom),
    ),
    ...yAxes,
  };
  return { data, layout };
}

/**
 * A target's routes in the agent-path shape lib/routes.ts reads (it uses only the routes, runs
 * and changes): the target stands where a destination agent would, with no agent id.
 */
export function routesAsPath(data: TargetRoutes): PathRoutes {
  return {
    source: data.source,
    destination: { id: "", name: data.target },
    family: data.target.includes(":") ? 6 : 4,
    start: data.from,
    end: data.to,
    routes: data.routes,
    runs: data.runs,
    changes: data.changes,
    truncated: data.truncated,
  };
}
