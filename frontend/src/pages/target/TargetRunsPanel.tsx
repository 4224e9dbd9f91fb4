// "Recent runs" of one target path, every kind, newest first: what each found, and for the runs
// that did not measure, why (the agent's own reason). A target whose runs all fail says so first.
import { useState } from "react";

import { useChoices, type Choice } from "../../api/queries";
import { TARGET_RUNS_LIMIT, type TargetRun } from "../../api/targetQueries";
import { ChoiceBadge } from "../../components/StatusBadge";
import { formatUtc } from "../../lib/format";
import { runCounts, runCountsText, runFindings } from "../../lib/targets";
import { testKind } from "../../lib/testKinds";

/** Rows shown at first, and added by each "Show more". */
export const RUNS_PAGE = 50;

function RunsTable({ runs, statuses }: { runs: readonly TargetRun[]; statuses: readonly Choice[] | undefined }) {
  return (
    <table className="failed-runs" data-testid="target-runs">
      <thead>
        <tr>
          <th>Started</th>
          <th>Test</th>
          <th>Status</th>
          <th>Found, or why not</th>
        </tr>
      </thead>
      <tbody>
        {runs.map((run) => (
          <tr key={run.id}>
            <td className="nowrap">{formatUtc(run.started_at)}</td>
            <td>{testKind(run.test_type).label}</td>
            <td>
              <ChoiceBadge choices={statuses} value={run.status} />
            </td>
            <td>
              {run.status === "ok" ? (
                runFindings(run)
              ) : run.error === "" ? (
                <span className="muted">no reason given</span>
              ) : (
                run.error
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** `runs`: the newest runs of the path, newest first, as GET /targets/runs/ answers. */
export function TargetRunsBody({ runs, target }: { runs: readonly TargetRun[]; target: string }) {
  const choices = useChoices();
  const [onlyFailed, setOnlyFailed] = useState(false);
  const [shown, setShown] = useState(RUNS_PAGE);
  if (runs.length === 0) {
    return <p className="muted">No runs to {target} are stored (raw retention may have dropped them).</p>;
  }
  const counts = runCounts(runs);
  const listed = onlyFailed ? runs.filter((run) => run.status !== "ok") : runs;
  return (
    <>
      {counts.ok === 0 && (
        <p className="warning" role="note" data-testid="target-only-failed">
          Every one of the newest {runs.length} runs to {target} failed: the target does not answer these probes, or
          the agent cannot run them. The reasons are below.
        </p>
      )}
      <p role="status">
        The newest {runs.length} runs{runs.length >= TARGET_RUNS_LIMIT ? " (there are older ones)" : ""}:{" "}
        {runCountsText(runs)}.
      </p>
      <div className="filters">
        <label>
          <input
            type="checkbox"
            checked={onlyFailed}
            onChange={(event) => {
              setOnlyFailed(event.target.checked);
            }}
          />{" "}
          Only runs that did not measure ({counts.notOk})
        </label>
      </div>
      {listed.length === 0 ? (
        <p className="muted">No failed or missed run among them.</p>
      ) : (
        <>
          <RunsTable runs={listed.slice(0, shown)} statuses={choices.data?.run_status} />
          {listed.length > shown && (
            <button
              type="button"
              onClick={() => {
                setShown(shown + RUNS_PAGE);
              }}
            >
              Show more ({listed.length - shown} left)
            </button>
          )}
        </>
      )}
    </>
  );
}
