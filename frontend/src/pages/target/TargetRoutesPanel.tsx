// "Routes" to an external target: the routes its trace runs saw (one per ECMP member the flows
// took), when that set changed, and any two side by side, hop by hop; the agent-path view's
// functions (lib/routes.ts) over the target's traces.
import { useMemo, useState } from "react";

import { useTargetRoutes } from "../../api/targetQueries";
import type { PathRoutes, RouteHop } from "../../api/routeQueries";
import { Panel } from "../../components/Panel";
import { PlotlyChart } from "../../components/PlotlyChart";
import { LoadError, Loading } from "../../components/QueryState";
import { formatMs, formatUtc } from "../../lib/format";
import type { HistoryRange } from "../../lib/historyRange";
import { currentRoutes, formatAs, latestFlowCount, routeDiff, routeTimeline } from "../../lib/routes";
import { routesAsPath } from "../../lib/targets";

function Hop({ hop }: { hop: RouteHop | null }) {
  if (hop === null) {
    return <td className="muted">–</td>;
  }
  if (hop.address === null) {
    return <td className="muted">* no answer</td>;
  }
  const details = [formatAs(hop), formatMs(hop.rtt_ms), hop.mtu === null ? "" : `MTU ${String(hop.mtu)}`];
  return (
    <td>
      <code>{hop.address}</code>
      {hop.hostname !== null && <div>{hop.hostname}</div>}
      <div className="muted">{details.filter((part) => part !== "").join(" · ")}</div>
    </td>
  );
}

function Comparison({ data }: { data: PathRoutes }) {
  const now = currentRoutes(data);
  const [left, setLeft] = useState(now[0]?.label ?? data.routes[0]?.label ?? "");
  const [right, setRight] = useState(now[1]?.label ?? left);
  const leftRoute = data.routes.find((route) => route.label === left) ?? data.routes[0];
  const rightRoute = data.routes.find((route) => route.label === right) ?? leftRoute;
  if (leftRoute === undefined || rightRoute === undefined) {
    return null;
  }
  const one = leftRoute.label === rightRoute.label;
  const select = (value: string, onChange: (value: string) => void, label: string) => (
    <label>
      {label}{" "}
      <select
        value={value}
        onChange={(event) => {
          onChange(event.target.value);
        }}
      >
        {data.routes.map((route) => (
          <option key={route.label} value={route.label}>
            route {route.label} ({route.hops.length} hops, seen {formatUtc(route.last_seen)})
          </option>
        ))}
      </select>
    </label>
  );
  return (
    <>
      <div className="filters">
        {select(leftRoute.label, setLeft, "Route")}
        {select(rightRoute.label, setRight, "beside")}
      </div>
      {leftRoute.hops.length > 0 && leftRoute.unanswered_hops === leftRoute.hops.length && (
        <p className="muted">No hop of route {leftRoute.label} answered: routers on the way drop or rate-limit the probes.</p>
      )}
      <table className="route-diff" data-testid="target-route-diff">
        <thead>
          <tr>
            <th className="number">TTL</th>
            <th>Route {leftRoute.label}</th>
            {!one && <th>Route {rightRoute.label}</th>}
          </tr>
        </thead>
        <tbody>
          {routeDiff(leftRoute, rightRoute).map((row) => (
            <tr key={row.ttl} className={one || row.same ? undefined : "differs"}>
              <td className="number">{row.ttl}</td>
              <Hop hop={row.left} />
              {!one && <Hop hop={row.right} />}
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function RoutesBody({ data }: { data: PathRoutes }) {
  const figure = useMemo(() => routeTimeline(data), [data]);
  if (data.routes.length === 0) {
    return (
      <p className="muted" data-testid="target-routes-empty">
        No traceroutes to this target between {formatUtc(data.start)} and {formatUtc(data.end)}. A trace test in the
        list mesh naming it runs one per flow, so that each ECMP member shows.
      </p>
    );
  }
  const now = currentRoutes(data);
  const flows = latestFlowCount(data);
  const mtus = now.map((route) => route.path_mtu).filter((mtu): mtu is number => mtu !== null);
  return (
    <>
      <p data-testid="target-routes-summary">
        {data.routes.length} {data.routes.length === 1 ? "route" : "routes"} in {data.runs.length} trace runs. The
        newest run ({formatUtc(data.runs.at(-1)?.time)}) took{" "}
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
          uiRevision={`${data.source.id}/${data.destination.name}`}
          testId="target-route-timeline"
        />
      )}
      {data.changes.length > 0 && (
        <ul className="route-changes" aria-label="Route changes">
          {data.changes
            .slice(-10)
            .reverse()
            .map((change) => (
              <li key={change.time}>
                {formatUtc(change.time)}:{" "}
                {[...change.added.map((label) => `+${label}`), ...change.removed.map((label) => `−${label}`)].join(" ")}
              </li>
            ))}
        </ul>
      )}
      <Comparison key={`${data.source.id}/${data.destination.name}`} data={data} />
    </>
  );
}

export function TargetRoutesPanel({ source, target, range }: { source: string; target: string; range: HistoryRange }) {
  const routes = useTargetRoutes(source, target, range.from, range.to, range.live);
  const data = useMemo(() => (routes.data === undefined ? undefined : routesAsPath(routes.data)), [routes.data]);
  return (
    <Panel title="Routes">
      {routes.isPending ? (
        <Loading what="the routes" />
      ) : routes.isError ? (
        <LoadError what="the routes" error={routes.error} />
      ) : data === undefined ? null : (
        <RoutesBody data={data} />
      )}
    </Panel>
  );
}
