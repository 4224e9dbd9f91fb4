// A table of runs, newest first: when each started, its test, its status badge, and one last
// column the page chooses (a failed run's reason, or what an ok run found).
import type { ReactNode } from "react";

import type { Choice } from "../api/queries";
import { formatUtc } from "../lib/format";
import { testKind } from "../lib/testKinds";
import { ChoiceBadge } from "./StatusBadge";

interface RunRowBase {
  id: string;
  started_at: string;
  test_type: string;
  status: string;
}

export function RunsTable<Run extends RunRowBase>({
  runs,
  statuses,
  lastHeading,
  lastCell,
  testId,
}: {
  runs: readonly Run[];
  statuses: readonly Choice[] | undefined;
  lastHeading: string;
  lastCell: (run: Run) => ReactNode;
  testId?: string;
}) {
  return (
    <table className="failed-runs" data-testid={testId}>
      <thead>
        <tr>
          <th>Started</th>
          <th>Test</th>
          <th>Status</th>
          <th>{lastHeading}</th>
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
            <td>{lastCell(run)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
