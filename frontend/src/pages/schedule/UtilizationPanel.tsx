// Each agent's share of exclusive time: reserved ahead against what its meshes ask for.
import { Link } from "react-router-dom";

import { useSlotUtilization, type AgentUtilization } from "../../api/queries";
import { LoadError, Loading } from "../../components/QueryState";
import {
  DEMAND_LIMIT,
  formatApproxSpan,
  formatShare,
  horizonSummary,
  isOverDemand,
  shareBarPercent,
  sortByDemand,
} from "../../lib/schedule";

function ShareBar({ fraction, over }: { fraction: number; over: boolean }) {
  return (
    <span className={over ? "share-bar over" : "share-bar"} aria-hidden="true">
      <span style={{ width: `${shareBarPercent(fraction)}%` }} />
    </span>
  );
}

function slotsOfAgent(agent: string): string {
  return `?${new URLSearchParams({ agent }).toString()}`;
}

function UtilizationRow({ row }: { row: AgentUtilization }) {
  const over = isOverDemand(row);
  return (
    <tr className={over ? "over-demand" : undefined}>
      <td>
        <Link to={slotsOfAgent(row.agent)} title={`Show the slots of ${row.agent}`}>
          {row.agent}
        </Link>
      </td>
      <td className="share">
        <ShareBar fraction={row.utilization} over={false} />
        {formatShare(row.utilization)}{" "}
        <span className="muted">({formatApproxSpan(row.planned_exclusive_s)})</span>
      </td>
      <td className="share">
        <ShareBar fraction={row.demand} over={over} />
        {over ? <strong>{formatShare(row.demand)}</strong> : formatShare(row.demand)}
        {over && <span className="flag"> over {formatShare(DEMAND_LIMIT)}</span>}
      </td>
      <td className="number">{row.slots_planned}</td>
    </tr>
  );
}

/** Each agent's share of exclusive time: what is reserved ahead, and what its meshes ask for. */
export function UtilizationPanel({ now = new Date() }: { now?: Date }) {
  const utilization = useSlotUtilization();
  if (utilization.isPending) {
    return <Loading what="exclusive time per agent" />;
  }
  if (utilization.isError) {
    return <LoadError what="exclusive time per agent" error={utilization.error} />;
  }
  const data = utilization.data;
  const rows = sortByDemand(data.agents);
  const overloaded = rows.filter(isOverDemand);
  return (
    <>
      {data.horizon_s > 0 ? (
        <p>
          Throughput slots are {horizonSummary(data.planned_until, data.horizon_s, now)}.{" "}
          <span className="muted">
            Reserved is the share of that horizon an agent spends in throughput tests, as sender or
            receiver; demand is what its meshes ask for in steady state.
          </span>
        </p>
      ) : (
        <p className="warning" role="note">
          Nothing is planned ahead. The planner extends the plan every 5 minutes from Celery beat:
          check that <code>celery beat</code> and a worker are running.
        </p>
      )}
      {overloaded.length > 0 && (
        <div className="warning" role="alert">
          <strong>
            {overloaded.map((row) => row.agent).join(", ")} {overloaded.length === 1 ? "is" : "are"} asked for
            more than {formatShare(DEMAND_LIMIT)} of {overloaded.length === 1 ? "its" : "their"} time.
          </strong>{" "}
          Such an agent cannot take more throughput tests, and its runs start to be unschedulable or
          late. To make room: lengthen the throughput intervals, widen the slip (<code>slip_s</code>, up
          to the interval) so the planner can move runs, or split the mesh so each agent has fewer
          throughput peers.
        </div>
      )}
      {rows.length === 0 ? (
        <p className="muted">
          No active agents. Create an enrolment token (<code>manage.py create_enrollment_token</code>)
          and run <code>fathom-agent enroll</code> on each endpoint; a mesh with a throughput test then
          gives them slots.
        </p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Agent</th>
              <th>Reserved in the horizon</th>
              <th>Demand</th>
              <th className="number">Slots planned</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <UtilizationRow key={row.agent} row={row} />
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

