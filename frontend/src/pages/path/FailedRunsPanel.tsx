// "Failed runs": the runs of this path that did not succeed, with their reason. For perfSONAR
// nodes that is pScheduler's own ("pScheduler run nonstart: Run forbidden by limits"); a
// Fathom agent reports its error the same way.
import { useSearchParams } from "react-router-dom";

import type { PathRun } from "../../api/perfsonar";
import { RUNS_LIMIT, useFailedRuns } from "../../api/perfsonarQueries";
import { useChoices, type Choice } from "../../api/queries";
import { Panel } from "../../components/Panel";
import { LoadError, Loading } from "../../components/QueryState";
import { RunsTable } from "../../components/RunsTable";
import { rangeFromKey } from "../../lib/timeRange";

/** More than this many rows says little more; the count above the table still says how many. */
export const MAX_FAILED_ROWS = 100;

/** "3 failed, 1 missed" (the commonest first) for the panel's summary line. */
export function failedRunsSummary(runs: readonly PathRun[]): string {
  const byStatus = new Map<string, number>();
  for (const run of runs) {
    byStatus.set(run.status, (byStatus.get(run.status) ?? 0) + 1);
  }
  return [...byStatus.entries()]
    .sort(([statusA, a], [statusB, b]) => b - a || statusA.localeCompare(statusB))
    .map(([status, count]) => `${String(count)} ${status}`)
    .join(", ");
}

function FailedRunsTable({ runs, statuses }: { runs: readonly PathRun[]; statuses: readonly Choice[] | undefined }) {
  // The server answers newest first.
  const shown = runs.slice(0, MAX_FAILED_ROWS);
  return (
    <>
      <p role="status">
        {failedRunsSummary(runs)}
        {runs.length >= RUNS_LIMIT && ` (the newest ${String(RUNS_LIMIT)}; there may be more)`}
        {runs.length > shown.length && `; the newest ${String(shown.length)} are listed`}.
      </p>
      <RunsTable
        runs={shown}
        statuses={statuses}
        lastHeading="Reason"
        lastCell={(run) => (run.error === "" ? <span className="muted">no reason given</span> : run.error)}
      />
    </>
  );
}

/** The failed and missed runs of one direction of a path, over the time range the page shows. */
export function FailedRunsPanel({
  source,
  destination,
  rangeS,
  rangeLabel,
  family = 4,
}: {
  source: string;
  destination: string;
  /** Seconds back from now; without it, the URL's `range`. */
  rangeS?: number;
  /** The range in words, e.g. "the last 24 hours". */
  rangeLabel?: string;
  /** The path's address family (IPv4 unless given). */
  family?: number;
}) {
  const [params] = useSearchParams();
  const named = rangeFromKey(params.get("range"));
  const range = { seconds: rangeS ?? named.seconds, label: rangeLabel ?? `the last ${named.label}` };
  const runs = useFailedRuns(source, destination, range.seconds, family);
  const choices = useChoices();
  let body;
  if (runs.isPending) {
    body = <Loading what="the failed runs" />;
  } else if (runs.isError) {
    body = <LoadError what="the failed runs" error={runs.error} />;
  } else if (runs.data.length === 0) {
    body = <p className="muted">No failed or missed runs in {range.label}.</p>;
  } else {
    body = <FailedRunsTable runs={runs.data} statuses={choices.data?.run_status} />;
  }
  return <Panel title="Failed runs">{body}</Panel>;
}
