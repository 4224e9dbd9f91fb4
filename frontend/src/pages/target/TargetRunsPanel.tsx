// "Recent runs" of one target path, every kind, newest first: what each found, and for the runs
// that did not measure, why (the agent's own reason). A target whose runs all fail says so first.
import { useState } from "react";

import { useChoices } from "../../api/queries";
import { TARGET_RUNS_LIMIT, type TargetRun } from "../../api/targetQueries";
import { RunsTable } from "../../components/RunsTable";
import { runCounts, runCountsText, runFindings } from "../../lib/targets";

/** Rows shown at first, and added by each "Show more". */
export const RUNS_PAGE = 50;

/** What an ok run found; for the others, why they did not measure. */
function foundOrWhyNot(run: TargetRun) {
  if (run.status === "ok") {
    return runFindings(run);
  }
  return run.error === "" ? <span className="muted">no reason given</span> : run.error;
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
          <RunsTable
            runs={listed.slice(0, shown)}
            statuses={choices.data?.run_status}
            lastHeading="Found, or why not"
            lastCell={foundOrWhyNot}
            testId="target-runs"
          />
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
