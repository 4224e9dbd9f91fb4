// One agent -> external target path (a list mesh's far end: a host name or address with no
// agent there): RTT and loss over the range in the URL (and a latency test's delay and loss each
// way to the device's reflector), the recent runs with their failures, and the routes the trace
// runs saw.
import { useMemo } from "react";
import { Link, useParams, useSearchParams } from "react-router-dom";

import { ApiError } from "../../api/client";
import { useMeshes } from "../../api/queries";
import { useTargetLatency, useTargetRtt, useTargetRuns } from "../../api/targetQueries";
import { Panel } from "../../components/Panel";
import { usePlotlyAhead } from "../../components/PlotlyChart";
import { LoadError, Loading } from "../../components/QueryState";
import { HISTORY_RANGES, namedRangeParams, rangeFromParams } from "../../lib/historyRange";
import { meshesByTarget, normalizeTarget } from "../../lib/targets";
import { TargetRoutesPanel } from "./TargetRoutesPanel";
import { TargetRttSection } from "./TargetRttSection";
import { TargetRunsBody } from "./TargetRunsPanel";

/** A minute-stable now: the range's query keys change once a minute, not on every render. */
function minuteNow(): Date {
  return new Date(Math.floor(Date.now() / 60_000) * 60_000);
}

function RangePicker({ current }: { current: string | null }) {
  const [params, setParams] = useSearchParams();
  return (
    <div className="toolbar" role="group" aria-label="Time range">
      {HISTORY_RANGES.map((option) => (
        <button
          key={option.key}
          type="button"
          aria-pressed={current === option.key}
          onClick={() => {
            setParams(namedRangeParams(params, option.key));
          }}
        >
          {option.label}
        </button>
      ))}
    </div>
  );
}

export function TargetPage() {
  const { source = "", target: rawTarget = "" } = useParams();
  const target = normalizeTarget(rawTarget);
  const [params] = useSearchParams();
  const range = rangeFromParams(params, minuteNow());
  usePlotlyAhead();
  const rtt = useTargetRtt(source, target, range.from, range.to, range.live);
  const runs = useTargetRuns(source, target);
  // Asked for only once the target's runs show a latency test: most targets are pinged only.
  const hasLatency = rtt.data?.latest.some((latest) => latest.test_type === "latency") ?? false;
  const latency = useTargetLatency(source, target, range.from, range.to, range.live, hasLatency);
  const meshes = useMeshes();
  // The server's spelling of the target (an address in canonical form) once it has answered.
  const shownTarget = rtt.data?.target ?? target;
  const naming = useMemo(
    () => meshesByTarget(meshes.data ?? []).get(shownTarget) ?? [],
    [meshes.data, shownTarget],
  );

  const crumbs = (
    <p className="crumbs">
      <Link to="/paths">Paths</Link> / external target
    </p>
  );
  if (rtt.isPending) {
    return (
      <>
        {crumbs}
        <Loading what="the target's measurements" />
      </>
    );
  }
  if (rtt.isError) {
    const missing = rtt.error instanceof ApiError && rtt.error.status === 404;
    return (
      <>
        {crumbs}
        <h1>{target}</h1>
        {missing ? (
          <p className="muted" data-testid="target-unknown">
            {rtt.error.message}. The Paths page lists every agent → target path with runs.
          </p>
        ) : (
          <LoadError what="the target's measurements" error={rtt.error} />
        )}
      </>
    );
  }
  const series = rtt.data;
  return (
    <>
      <section>
        {crumbs}
        <h1>
          {series.source.name} → {series.target}
        </h1>
        <p className="muted">
          Measured by {series.source.name} towards an external target (no Fathom agent there)
          {naming.length > 0 ? `, named by the list ${naming.length === 1 ? "mesh" : "meshes"} ${naming.join(", ")}` : ""}.
          Tests: {series.latest.map((latest) => latest.test_type).join(", ")}.
        </p>
        <RangePicker current={range.key} />
        {range.problem !== null && (
          <p className="warning" role="note">
            {range.problem}
          </p>
        )}
      </section>
      <TargetRttSection
        series={series}
        latency={latency.data ?? null}
        latencyError={latency.error}
        runs={runs.data?.runs ?? []}
        range={range}
      />
      <Panel title="Recent runs">
        {runs.isPending ? (
          <Loading what="the runs" />
        ) : runs.isError ? (
          <LoadError what="the runs" error={runs.error} />
        ) : (
          <TargetRunsBody runs={runs.data.runs} target={series.target} />
        )}
      </Panel>
      <TargetRoutesPanel source={source} target={target} range={range} />
    </>
  );
}
