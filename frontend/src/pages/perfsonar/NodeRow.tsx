import { Fragment, useState } from "react";

import { useCheckPerfsonarNode, useRemovePerfsonarNode } from "../../api/perfsonarQueries";
import type { Choice } from "../../api/queries";
import { ConfirmButton } from "../../components/ConfirmButton";
import { ChoiceBadge, StatusBadge } from "../../components/StatusBadge";
import { formatAgo, formatUtc } from "../../lib/format";
import { splitErrors } from "../../lib/formErrors";
import { ArchiveTokenPanel } from "./ArchiveTokenPanel";
import { ClockOffset, NodeDetails, Reachability } from "./NodeDetails";
import { NodeTasks } from "./NodeTasks";
import {
  isBeingRemoved,
  isClockSkewed,
  isRowDecommissioned,
  rowNeedsAttention,
  taskCounts,
  type AgentsRow,
} from "./nodes";
import "./perfsonar.css";

/** Check now, the archive token and removal of one node (operators and admins). */
function NodeActions({
  name,
  tokenShown,
  onToggleToken,
}: {
  name: string;
  tokenShown: boolean;
  onToggleToken: () => void;
}) {
  const check = useCheckPerfsonarNode();
  const remove = useRemovePerfsonarNode();
  const busy = check.isPending || remove.isPending;
  const error = splitErrors(check.error ?? remove.error, []).general;
  return (
    <div className="row-actions">
      <button
        type="button"
        disabled={busy}
        onClick={() => {
          check.mutate(name);
        }}
      >
        {check.isPending ? "Checking…" : "Check now"}
      </button>
      <button type="button" aria-expanded={tokenShown} onClick={onToggleToken}>
        Archive token
      </button>
      <ConfirmButton
        label="Remove"
        question={`Remove ${name}? Fathom deletes its tasks from the node and decommissions it; its results and history are kept.`}
        busyLabel="Removing…"
        disabled={busy}
        onConfirm={() => remove.mutateAsync(name)}
      />
      {error !== null && (
        <span className="error" role="alert">
          {error}
        </span>
      )}
    </div>
  );
}

/**
 * One perfSONAR node in the Agents table: reachability and last check in the row, its
 * problems right below it, and on demand its details, its pScheduler tasks and its archive token.
 */
export function NodeRow({
  row,
  canOperate,
  columns,
  kindChoices,
}: {
  row: AgentsRow;
  canOperate: boolean;
  columns: number;
  kindChoices: readonly Choice[] | undefined;
}) {
  const [detailsShown, setDetailsShown] = useState(false);
  const [tasksShown, setTasksShown] = useState(false);
  const [tokenShown, setTokenShown] = useState(false);
  const { node, agent } = row;
  const decommissioned = isRowDecommissioned(row);
  const rowClass = rowNeedsAttention(row) ? "agent-offline" : decommissioned ? "disabled" : undefined;
  let status;
  if (node !== null && !decommissioned) {
    status = (
      <>
        <Reachability node={node} />
        {isClockSkewed(node.clock_offset_s) && (
          <>
            {" "}
            <span className="muted">clock</span> <ClockOffset node={node} />
          </>
        )}
      </>
    );
  } else if (agent !== null) {
    status = <StatusBadge choice={agent.status} />;
  } else {
    status = <span className="muted">–</span>;
  }
  return (
    <Fragment>
      <tr className={rowClass} data-kind="perfsonar">
        <td>
          <strong>{row.name}</strong>
        </td>
        <td>
          <ChoiceBadge choices={kindChoices} value="perfsonar" />
        </td>
        <td>{node?.address ?? agent?.address ?? "–"}</td>
        <td>{status}</td>
        <td className="nowrap" title={`Last check: ${formatUtc(node?.checked_at)}`}>
          {node === null ? "–" : (node.checked_at ?? null) === null ? "never checked" : `checked ${formatAgo(node.checked_at)}`}
        </td>
        <td className="version">{(node?.api_level ?? null) === null ? "–" : `API level ${String(node?.api_level)}`}</td>
        <td>
          {node !== null && (
            <div className="row-actions">
              <button
                type="button"
                className="link"
                aria-expanded={detailsShown}
                onClick={() => {
                  setDetailsShown(!detailsShown);
                }}
              >
                {detailsShown ? "Hide node" : "Show node"}
              </button>
              <button
                type="button"
                className="link"
                aria-expanded={tasksShown}
                onClick={() => {
                  setTasksShown(!tasksShown);
                }}
              >
                {tasksShown ? "Hide tasks" : `Tasks (${taskCounts(node.tasks)})`}
              </button>
            </div>
          )}
        </td>
        {canOperate && (
          <td>
            {isBeingRemoved(row) ? (
              <span className="muted" role="status">
                removing: deleting its tasks from the node (asked {formatAgo(node?.removing_since)})
              </span>
            ) : decommissioned ? (
              <span className="muted">decommissioned {formatAgo(agent?.decommissioned_at)}</span>
            ) : (
              node !== null && (
                <NodeActions
                  name={node.name}
                  tokenShown={tokenShown}
                  onToggleToken={() => {
                    setTokenShown(!tokenShown);
                  }}
                />
              )
            )}
          </td>
        )}
      </tr>
      {node !== null && !decommissioned && node.problems.length > 0 && (
        <tr className="detail node-problems">
          <td colSpan={columns}>
            <strong>Problems with {node.name}:</strong>
            <ul>
              {node.problems.map((problem) => (
                <li key={problem}>{problem}</li>
              ))}
            </ul>
          </td>
        </tr>
      )}
      {canOperate && tokenShown && node !== null && !decommissioned && (
        <tr className="detail">
          <td colSpan={columns}>
            <ArchiveTokenPanel
              name={node.name}
              onClose={() => {
                setTokenShown(false);
              }}
            />
          </td>
        </tr>
      )}
      {detailsShown && node !== null && (
        <tr className="detail">
          <td colSpan={columns}>
            <NodeDetails node={node} />
          </td>
        </tr>
      )}
      {tasksShown && node !== null && (
        <tr className="detail">
          <td colSpan={columns}>
            <NodeTasks name={node.name} />
          </td>
        </tr>
      )}
    </Fragment>
  );
}
