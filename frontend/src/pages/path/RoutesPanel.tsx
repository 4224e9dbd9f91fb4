// "Routes": the traceroute of every ECMP member the path's flows took, when the set of routes
// changed, and any two routes side by side, hop by hop.
import { usePathRoutes, type PathRoutes, type Route } from "../../api/routeQueries";
import { Panel } from "../../components/Panel";
import { LoadError, Loading } from "../../components/QueryState";
import { routeDiff } from "../../lib/routes";
import { RouteDiffTable, RoutePair, RouteRuns } from "./routeParts";

function RouteComparison({ left, right }: { left: Route; right: Route }) {
  const rows = routeDiff(left, right);
  const one = left.label === right.label;
  const differing = rows.filter((row) => !row.same).length;
  return (
    <>
      <p className="muted" data-testid="route-diff-summary">
        {one
          ? `Route ${left.label}: ${String(left.hops.length)} hops, ${left.reached ? "reaches" : "does not reach"} the destination.`
          : `Routes ${left.label} and ${right.label} differ at ${String(differing)} of ${String(rows.length)} hops.`}
        {left.unanswered_hops === left.hops.length && left.hops.length > 0 &&
          ` No hop of route ${left.label} answered: routers on the way drop or rate-limit the probes.`}
      </p>
      <RouteDiffTable left={left} right={right} rows={rows} testId="route-diff" />
    </>
  );
}

function RoutesBody({ data, rangeLabel }: { data: PathRoutes; rangeLabel: string }) {
  if (data.routes.length === 0) {
    return (
      <p className="muted" data-testid="routes-empty">
        No traceroutes of this path in {rangeLabel}. A mesh with a trace test (Meshes page) runs one per flow, so
        that each ECMP member shows.
      </p>
    );
  }
  return (
    <>
      <RouteRuns
        data={data}
        uiRevision={`${data.source.id}/${data.destination.id}`}
        summaryTestId="routes-summary"
        timelineTestId="route-timeline"
      />
      <RoutePair key={`${data.source.id}/${data.destination.id}`} data={data} fallbackRight={data.routes.at(-1)?.label}>
        {(left, right) => <RouteComparison left={left} right={right} />}
      </RoutePair>
    </>
  );
}

export function RoutesPanel({
  source,
  destination,
  rangeS,
  rangeLabel,
  family = 4,
}: {
  source: string;
  destination: string;
  rangeS: number;
  rangeLabel: string;
  /** The path's address family: IPv6 takes its own routes. */
  family?: number;
}) {
  const routes = usePathRoutes(source, destination, rangeS, family);
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
