// The pieces of a "Routes" panel that the agent path's and the external target's share: the
// runs' summary, timeline and changes, the two route pickers and the hop-by-hop table.
import { useMemo, useState, type ReactNode } from "react";

import type { PathRoutes, Route, RouteHop } from "../../api/routeQueries";
import { PlotlyChart } from "../../components/PlotlyChart";
import { formatMs, formatUtc } from "../../lib/format";
import { currentRoutes, formatAs, latestFlowCount, routeTimeline, type DiffRow } from "../../lib/routes";

const CHANGES_SHOWN = 10;

function HopCell({ hop }: { hop: RouteHop | null }) {
  if (hop === null) {
    return <td className="muted">–</td>;
  }
  if (hop.address === null) {
    return <td className="muted">* no answer</td>;
  }
  const as = formatAs(hop);
  return (
    <td>
      <code>{hop.address}</code>
      {hop.hostname !== null && <div>{hop.hostname}</div>}
      {hop.other_addresses.length > 0 && <div className="muted">also {hop.other_addresses.join(", ")}</div>}
      <div className="muted">
        {[as, formatMs(hop.rtt_ms), hop.mtu === null ? "" : `MTU ${String(hop.mtu)}`].filter((part) => part !== "").join(" · ")}
      </div>
    </td>
  );
}

function RouteSelect({
  label,
  routes,
  value,
  onChange,
}: {
  label: string;
  routes: Route[];
  value: string;
  onChange: (value: string) => void;
}) {
  return (
    <label>
      {label}{" "}
      <select
        value={value}
        onChange={(event) => {
          onChange(event.target.value);
        }}
      >
        {routes.map((route) => (
          <option key={route.label} value={route.label}>
            route {route.label} ({route.hops.length} hops, seen {formatUtc(route.last_seen)})
          </option>
        ))}
      </select>
    </label>
  );
}

/** Two routes picked side by side ("Route" and "beside"), at first the newest run's first two;
 * `children` shows the pair. */
export function RoutePair({
  data,
  fallbackRight,
  children,
}: {
  data: PathRoutes;
  /** Beside the first when the newest run took one route (default: that route alone). */
  fallbackRight?: string | undefined;
  children: (left: Route, right: Route) => ReactNode;
}) {
  const now = currentRoutes(data);
  const [left, setLeft] = useState(now[0]?.label ?? data.routes[0]?.label ?? "");
  const [right, setRight] = useState(now[1]?.label ?? fallbackRight ?? left);
  const leftRoute = data.routes.find((route) => route.label === left) ?? data.routes[0];
  const rightRoute = data.routes.find((route) => route.label === right) ?? leftRoute;
  if (leftRoute === undefined || rightRoute === undefined) {
    return null;
  }
  return (
    <>
      <div className="filters">
        <RouteSelect label="Route" routes={data.routes} value={leftRoute.label} onChange={setLeft} />
        <RouteSelect label="beside" routes={data.routes} value={rightRoute.label} onChange={setRight} />
      </div>
      {children(leftRoute, rightRoute)}
    </>
  );
}

/** Two routes hop by hop (one column when both are the same route), differing hops marked. */
export function RouteDiffTable({
  left,
  right,
  rows,
  testId,
}: {
  left: Route;
  right: Route;
  rows: DiffRow[];
  testId: string;
}) {
  const one = left.label === right.label;
  return (
    <table className="route-diff" data-testid={testId}>
      <thead>
        <tr>
          <th className="number">TTL</th>
          <th>Route {left.label}</th>
          {!one && <th>Route {right.label}</th>}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.ttl} className={one || row.same ? undefined : "differs"}>
            <td className="number">{row.ttl}</td>
            <HopCell hop={row.left} />
            {!one && <HopCell hop={row.right} />}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** What the trace runs of the range saw: how many routes, the newest run's, the timeline and the newest changes. */
export function RouteRuns({
  data,
  uiRevision,
  summaryTestId,
  timelineTestId,
}: {
  data: PathRoutes;
  uiRevision: string;
  summaryTestId: string;
  timelineTestId: string;
}) {
  const figure = useMemo(() => routeTimeline(data), [data]);
  const now = currentRoutes(data);
  const flows = latestFlowCount(data);
  const mtus = now.map((route) => route.path_mtu).filter((mtu): mtu is number => mtu !== null);
  return (
    <>
      <p data-testid={summaryTestId}>
        {data.routes.length} {data.routes.length === 1 ? "route" : "routes"} in {data.runs.length} trace runs.{" "}
        The newest run ({formatUtc(data.runs.at(-1)?.time)}) took{" "}
        {now.map((route) => `${route.label} (${String(route.latest_flows)} of ${String(flows)} flows)`).join(", ")}.{" "}
        Path MTU: {mtus.length > 0 ? `${String(Math.min(...mtus))} bytes` : "not reported by the tracer"}.
      </p>
      {data.truncated && (
        <p className="warning" role="note">
          The range holds more trace runs than are read: only the newest {data.runs.length} are shown.
        </p>
      )}
      {data.runs.length > 1 && (
        <PlotlyChart
          data={figure.data}
          layout={figure.layout}
          height={Math.max(160, 60 + 30 * data.routes.length)}
          uiRevision={uiRevision}
          testId={timelineTestId}
        />
      )}
      {data.changes.length > 0 && (
        <ul className="route-changes" aria-label="Route changes">
          {data.changes
            .slice(-CHANGES_SHOWN)
            .reverse()
            .map((change) => (
              <li key={change.time}>
                {formatUtc(change.time)}:{" "}
                {[...change.added.map((label) => `+${label}`), ...change.removed.map((label) => `−${label}`)].join(" ")}
              </li>
            ))}
        </ul>
      )}
    </>
  );
}
