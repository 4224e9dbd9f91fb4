import type { PlanPreview, PlanPreviewAgent } from "../../api/meshQueries";
import { formatApproxSpan, formatShare, shareBarPercent } from "../../lib/schedule";

function DemandBar({ row }: { row: PlanPreviewAgent }) {
  return (
    <span className={row.overbooked ? "demand-bar over" : "demand-bar"} aria-hidden="true">
      <span className="after" style={{ width: `${shareBarPercent(row.demand)}%` }} />
      <span className="before" style={{ left: `${shareBarPercent(row.demand_before)}%` }} />
    </span>
  );
}

function demandChange(row: PlanPreviewAgent): string {
  return `${formatShare(row.demand_before)} → ${formatShare(row.demand)}`;
}

function byDemand(a: PlanPreviewAgent, b: PlanPreviewAgent): number {
  return Number(b.overbooked) - Number(a.overbooked) || b.demand - a.demand || a.agent.localeCompare(b.agent);
}

/**
 * What the mesh as edited would do to the plan: each agent's exclusive slots in the planned
 * horizon, and the share of its time its exclusive tests ask for, before and after.
 */
export function PlanPreviewView({ preview, stale }: { preview: PlanPreview; stale: boolean }) {
  const horizon = formatApproxSpan(preview.horizon_s);
  const overbooked = preview.agents.filter((row) => row.overbooked).map((row) => row.agent);
  const rows = [...preview.agents].sort(byDemand);
  return (
    <div className={stale ? "stale" : undefined} data-testid="plan-preview">
      {preview.ok ? (
        <p role="status">The plan fits: no agent is overbooked.</p>
      ) : (
        <div className="warning" role="alert">
          <strong>
            This change overbooks {overbooked.length > 0 ? overbooked.join(", ") : "an agent"}
            {preview.conflicts.length > 0 && ` and leaves ${preview.conflicts.length} run(s) without a slot`}.
          </strong>{" "}
          The server refuses it, so Save is disabled. To make room: lengthen the exclusive tests' intervals,
          widen their slip so the planner can move runs, shorten their duration, or take agents out of the mesh.
        </div>
      )}
      {rows.length === 0 ? (
        <p className="muted">No agent has exclusive tests in this mesh, so no slots are planned for it.</p>
      ) : (
        <table>
          <thead>
            <tr>
              <th>Agent</th>
              <th className="number">Slots in the next {horizon}</th>
              <th className="number">Exclusive time</th>
              <th>Demand before → after</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((row) => (
              <tr key={row.agent} className={row.overbooked ? "over-demand" : undefined}>
                <td>{row.agent}</td>
                <td className="number">{row.slots}</td>
                <td className="number">{formatApproxSpan(row.exclusive_s)}</td>
                <td className="share">
                  <DemandBar row={row} />
                  {row.overbooked ? <strong>{demandChange(row)}</strong> : demandChange(row)}
                  {row.overbooked && <span className="flag"> overbooked</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {preview.conflicts.length > 0 && (
        <>
          <h3>Conflicts</h3>
          <ul className="conflicts">
            {preview.conflicts.map((conflict, index) => (
              <li key={`${conflict.test}:${conflict.source}:${conflict.destination}:${index}`}>
                <strong>{conflict.test}</strong> {conflict.source} → {conflict.destination}: {conflict.reason}
              </li>
            ))}
          </ul>
        </>
      )}
      <p className="muted">
        Demand is the share of an agent&apos;s time its exclusive tests ask for, across every mesh; above 100 % it
        is overbooked. The bar shows the demand with this change; its tick, the demand before.
      </p>
    </div>
  );
}
