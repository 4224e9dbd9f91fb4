// What the Routes view says of a path's traceroutes: two routes side by side, hop by hop; the
// routes over time as a chart; a hop in a line. Plain functions of the API's data.
import type { Data, Layout } from "plotly.js";

import type { PathRoutes, Route, RouteHop } from "../api/routeQueries";

export interface DiffRow {
  ttl: number;
  left: RouteHop | null;
  right: RouteHop | null;
  /** The same router answered at this TTL on both (or neither answered on both). */
  same: boolean;
}

/** Two routes aligned by TTL: a hop that only one route has is a row with one side empty. */
export function routeDiff(left: Route, right: Route): DiffRow[] {
  const byTtl = (route: Route) => new Map(route.hops.map((hop) => [hop.ttl, hop]));
  const leftHops = byTtl(left);
  const rightHops = byTtl(right);
  const ttls = [...new Set([...leftHops.keys(), ...rightHops.keys()])].sort((a, b) => a - b);
  return ttls.map((ttl) => {
    const l = leftHops.get(ttl) ?? null;
    const r = rightHops.get(ttl) ?? null;
    return { ttl, left: l, right: r, same: l !== null && r !== null && l.address === r.address };
  });
}

/** "AS5408 GRNET", "AS5408", or "" when the tracer did not look it up. */
export function formatAs(hop: RouteHop): string {
  if (hop.asn === null) {
    return hop.as_owner ?? "";
  }
  return hop.as_owner === null ? `AS${String(hop.asn)}` : `AS${String(hop.asn)} ${hop.as_owner}`;
}

/** The routes of the newest run, most flows first: what the path does now. */
export function currentRoutes(data: PathRoutes): Route[] {
  return data.routes.filter((route) => route.latest_flows > 0).sort((a, b) => b.latest_flows - a.latest_flows);
}

/** Flows of the newest run, for "A (12 of 16 flows)". */
export function latestFlowCount(data: PathRoutes): number {
  const newest = data.runs.at(-1);
  return newest === undefined ? 0 : Object.values(newest.flows).reduce((sum, flows) => sum + flows, 0);
}

/** One marker per run and route, sized by its share of the run's flows; a dotted line at each change. */
export function routeTimeline(data: PathRoutes): { data: Data[]; layout: Partial<Layout> } {
  const traces: Data[] = data.routes.map((route) => {
    const x: string[] = [];
    const size: number[] = [];
    const text: string[] = [];
    for (const run of data.runs) {
      const flows = run.flows[route.label];
      if (flows === undefined) {
        continue;
      }
      const total = Object.values(run.flows).reduce((sum, count) => sum + count, 0);
      x.push(run.time);
      size.push(5 + 10 * (flows / Math.max(total, 1)));
      text.push(`route ${route.label}: ${String(flows)} of ${String(total)} flows`);
    }
    return {
      type: "scatter",
      mode: "markers",
      name: `route ${route.label}`,
      x,
      y: x.map(() => route.label),
      marker: { size },
      hovertext: text,
      hoverinfo: "x+text",
    };
  });
  const layout: Partial<Layout> = {
    margin: { l: 60, r: 10, t: 10, b: 40 },
    showlegend: false,
    xaxis: { type: "date", title: { text: "UTC" } },
    yaxis: { type: "category", title: { text: "route" }, categoryorder: "array", categoryarray: data.routes.map((r) => r.label) },
    shapes: data.changes.map((change) => ({
      type: "line",
      xref: "x",
      yref: "paper",
      x0: change.time,
      x1: change.time,
      y0: 0,
      y1: 1,
      line: { color: "#9a6700", dash: "dot", width: 1 },
    })),
  };
  return { data: traces, layout };
}
