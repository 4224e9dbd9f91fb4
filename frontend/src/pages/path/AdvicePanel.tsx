// "Advice": what stands between this path and a goal rate, in the order it binds (what
// limits it now first, then each ceiling term below the goal), with the setting that lifts
// each, sized by the server from the path's label and both hosts' tuning; the goal re-asks
// the server.
import type { PathAnalysis } from "../../api/queries";
import { Panel } from "../../components/Panel";
import { parseGoalGbps } from "../../lib/analysis";
import { formatRate } from "../../lib/format";
import { AnalysisState, NO_RUN_HINT, type AnalysisQuery } from "./AnalysisState";
import { SettingForm } from "./SettingForm";

/** A rate in Gbit/s for an input's placeholder: 10000000000 -> "10". */
function gbitText(bps: number | null): string {
  return bps === null ? "" : String(Math.round((bps / 1e9) * 1000) / 1000);
}

function AdviceTable({ data }: { data: PathAnalysis }) {
  if (data.advice.length === 0) {
    return (
      <p className="muted">
        {data.runs.length === 0
          ? "No advice yet: it is sized from the newest throughput run and both hosts' tuning. " + NO_RUN_HINT
          : `Nothing to change for a goal of ${formatRate(data.goal_bps)}: the path and every ceiling term ` +
            "reach it. Raise the goal to see what it would take."}
      </p>
    );
  }
  return (
    <table className="advice">
      <thead>
        <tr>
          <th>Where</th>
          <th>Setting</th>
          <th>Value</th>
          <th>Why</th>
        </tr>
      </thead>
      <tbody>
        {data.advice.map((item, index) => (
          <tr key={index}>
            <td>{item.where}</td>
            <td>
              <code>{item.setting}</code> <span className="muted">({item.kind})</span>
            </td>
            <td>
              <code>{item.value}</code>
            </td>
            <td>{item.reason}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The advice; `goalBps` is what the user asked for, null for the server's default. */
export function AdvicePanel({
  analysis,
  goalBps,
  onGoal,
}: {
  analysis: AnalysisQuery;
  goalBps: number | null;
  onGoal: (goalBps: number | null) => void;
}) {
  return (
    <Panel title="Advice">
      <SettingForm
        label="Goal rate"
        unit="Gbit/s"
        placeholder={gbitText(analysis.data?.goal_bps ?? null)}
        parse={parseGoalGbps}
        onApply={onGoal}
      />
      <AnalysisState analysis={analysis} what="the advice">
        {(data) => (
          <>
            {data.goal_bps !== null && (
              <p className="muted">
                Sized for {formatRate(data.goal_bps)}
                {goalBps === null && " (the default: the slower host's link speed when known)"} over the slowest RTT mode.
              </p>
            )}
            <AdviceTable data={data} />
          </>
        )}
      </AnalysisState>
    </Panel>
  );
}
