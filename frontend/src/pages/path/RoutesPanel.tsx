// "Routes": the traceroute of every ECMP member the path's flows took, when the set of routes
// changed, and any two routes side by side, hop by hop.
import { useMemo, useState } from "react";

import { usePathRoutes, type PathRoutes, type Route, type RouteHop } from "../../api/routeQueries";
import { Panel } from "../../components/Panel";
import { PlotlyChart } from "../../components/PlotlyChart";
import { LoadError, Loading } from "../../components/QueryState";
import { formatMs, formatUtc } from "../../lib/format";
import { currentRoutes, formatAs, latestFlowCount, routeDiff, routeTimeline } from "../../lib/routes";

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

function RouteComparison({ data }: { data: PathRoutes }) {
  const now = currentRoutes(data);
  const [left, setLeft] = useState(now[0]?.label ?? data.routes[0]?.label ?? "");
  const [right, setRight] = useState(now[1]?.label ?? data.routes.at(-1)?.label ?? left);
  const leftRoute = data.routes.find((route) => route.label === left) ?? data.routes[0];
  const rightRoute = data.routes.find((route) => route.label === right) ?? leftRoute;
  if (leftRoute === undefined || rightRoute === undefined) {
    return null;
  }
  const rows = routeDiff(leftRoute, rightRoute);
  const one = leftRoute.label === rightRoute.label;
  const differing = rows.filter((row) => !row.same).length;
  return (
    <>
      <div className="filters">
        <RouteSelect label="Route" routes={data.routes} value={leftRoute.label} onChange={setLeft} />
        <RouteSelect label="beside" routes={data.routes} value={rightRoute.label} onChange={setRight} />
      </div>
      <p className="muted" data-testid="route-diff-summary">
        {one
          ? `Route ${leftRoute.label}: ${String(leftRoute.hops.length)} hops, ${leftRoute.reached ? "reaches" : "does not reach"} the destination.`
          : `Routes ${leftRoute.label} and ${rightRoute.label} differ at ${String(differing)} of ${String(rows.length)} hops.`}
        {leftRoute.unanswered_hops === leftRoute.hops.length && leftRoute.hops.length > 0 &&
          ` No hop of route ${leftRoute.label} answered: routers on the way drop or rate-limit the probes.`}
      </p>
      <table className="route-diff" data-testid="route-diff">
        <thead>
          <tr>
            <th className="number">TTL</th>
            <th>Route {leftRoute.label}</th>
            {!one && <th>Route {rightRoute.label}</th>}
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
    </>
  );
}

function RoutesBody({ data, rangeLabel }: { data: PathRoutes; rangeLabel: string }) {
  const figure = useMemo(() => routeTimeline(data), [data]);
  if (data.routes.length === 0) {
    return (
      <p className="muted" data-testid="routes-empty">
        No traceroutes of this path in {rangeLabel}. A mesh with a trace test (Meshes page) runs one per flow, so
        that each ECMP member shows.
      </p>
    );
  }
  const now = currentRoutes(data);
  const flows = latestFlowCount(data);
  const mtus = now.map((route) => route.path_mtu).filter((mtu): mtu is number => mtu !== null);
  const newest = data.runs.at(-1);
  return (
    <>
      <p data-testid="routes-summary">
        {data.routes.length} {data.routes.length === 1 ? "route" : "routes"} in {data.runs.length} trace runs.{" "}
        The newest run ({formatUtc(newest?.time)}) took{" "}
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
          uiRevision={`${data.source.id}/${data.destination.id}`}
          testId="route-timeline"
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
      <RouteComparison key={`${data.source.id}/${data.destination.id}`} data={data} />
    </>
  );
}

export function RoutesPanel({
  source,
  destination,
  rangeS,
  rangeLabel,
}: {
  source: string;
  destination: string;
  rangeS: number;
  rangeLabel: string;
}) {
  const routes = usePathRoutes(source, destination, rangeS);
  return (
    <Panel title="Routes">
      {routes.isPending ? (
        <Loading what="the routes" />
      ) : routes.isError ? (
        <LoadError what="the routes" error={routes.error} />
      ) : (
        <RoutesBody data={routes.data} rangeLabel={rangeLabel} />
      )}
    </Panel>
  );
}
