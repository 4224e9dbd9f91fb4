// "Routes" to an external target: the routes its trace runs saw (one per ECMP member the flows
// took), when that set changed, and any two side by side, hop by hop; the agent-path view's
// functions (lib/routes.ts) over the target's traces.
import { useMemo } from "react";

import { useTargetRoutes } from "../../api/targetQueries";
import type { PathRoutes, Route } from "../../api/routeQueries";
import { Panel } from "../../components/Panel";
import { LoadError, Loading } from "../../components/QueryState";
import { formatUtc } from "../../lib/format";
import type { HistoryRange } from "../../lib/historyRange";
import { routeDiff } from "../../lib/routes";
import { routesAsPath } from "../../lib/targets";
import { RouteDiffTable, RoutePair, RouteRuns } from "../path/routeParts";

function Comparison({ left, right }: { left: Route; right: Route }) {
  return (
    <>
      {left.hops.length > 0 && left.unanswered_hops === left.hops.length && (
        <p className="muted">No hop of route {left.label} answered: routers on the way drop or rate-limit the probes.</p>
      )}
      <RouteDiffTable left={left} right={right} rows={routeDiff(left, right)} testId="target-route-diff" />
    </>
  );
}

function RoutesBody({ data }: { data: PathRoutes }) {
  if (data.routes.length === 0) {
    return (
      <p className="muted" data-testid="target-routes-empty">
        No traceroutes to this target between {formatUtc(data.start)} and {formatUtc(data.end)}. A trace test in the
        list mesh naming it runs one per flow, so that each ECMP member shows.
      </p>
    );
  }
  return (
    <>
      <RouteRuns
        data={data}
        uiRevision={`${data.source.id}/${data.destination.name}`}
        summaryTestId="target-routes-summary"
        timelineTestId="target-route-timeline"
      />
      <RoutePair key={`${data.source.id}/${data.destination.name}`} data={data}>
        {(left, right) => <Comparison left={left} right={right} />}
      </RoutePair>
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
