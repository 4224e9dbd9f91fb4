import { useState } from "react";

import type { PerfsonarNode } from "../api/perfsonar";
import { usePerfsonarNodes } from "../api/perfsonarQueries";
import { useAgents, useChoices } from "../api/queries";
import { Panel } from "../components/Panel";
import { LoadError, Loading } from "../components/QueryState";
import { agentCounts } from "../lib/agents";
import { useCan } from "../lib/roles";
import { AddNodeForm, NodeAddedNotice } from "./perfsonar/AddNodeForm";
import { mergeAgentRows, nodeCounts, rowsInOrder } from "./perfsonar/nodes";
import { AgentTable } from "./agents/AgentTable";
import { EnrolAgent, EnrollmentTokens } from "./agents/Enrolment";

/** Fathom agents and perfSONAR nodes in one table; a node's own details come from the nodes API. */
function AgentList({ canOperate }: { canOperate: boolean }) {
  const agents = useAgents();
  const nodes = usePerfsonarNodes();
  const choices = useChoices();
  const [showDecommissioned, setShowDecommissioned] = useState(false);
  if (agents.isPending) {
    return <Loading what="agents" />;
  }
  if (agents.isError) {
    return <LoadError what="agents" error={agents.error} />;
  }
  const rows = mergeAgentRows(agents.data, nodes.data);
  const fathomAgents = rows.flatMap((row) => (row.kind === "fathom" && row.agent !== null ? [row.agent] : []));
  const counts = agentCounts(fathomAgents);
  const nodeCount = nodeCounts(rows);
  const decommissioned = rows.length - rowsInOrder(rows, false).length;
  const shown = rowsInOrder(rows, showDecommissioned);
  return (
    <>
      {nodes.isError && <LoadError what="the perfSONAR nodes" error={nodes.error} />}
      <div className="toolbar">
        <span className="agent-counts" role="status">
          {counts.live} agents · {counts.online} online ·{" "}
          <span className={counts.offline > 0 ? "flag" : undefined}>{counts.offline} offline</span>
          {counts.neverSeen > 0 && ` · ${String(counts.neverSeen)} never seen`}
          {nodeCount.live > 0 && (
            <>
              {" "}
              · {nodeCount.live} perfSONAR {nodeCount.live === 1 ? "node" : "nodes"}
              {nodeCount.unreachable > 0 && (
                <>
                  {" "}
                  (<span className="flag">{nodeCount.unreachable} unreachable</span>)
                </>
              )}
            </>
          )}
        </span>
        <label className="toggle">
          <input
            type="checkbox"
            checked={showDecommissioned}
            onChange={(event) => {
              setShowDecommissioned(event.target.checked);
            }}
          />{" "}
          Show decommissioned ({decommissioned})
        </label>
      </div>
      {shown.length === 0 ? (
        <p className="muted">
          {rows.length === 0
            ? canOperate
              ? "No agents yet. “Enrol an agent” creates a token and the command to run on the endpoint; “Add perfSONAR node” drives an existing perfSONAR node."
              : "No agents yet. An operator enrols them, or adds perfSONAR nodes, from this page."
            : "Every agent is decommissioned: tick “Show decommissioned” to see them."}
        </p>
      ) : (
        <AgentTable rows={shown} canOperate={canOperate} kindChoices={choices.data?.agent_kind} />
      )}
    </>
  );
}

/**
 * Every enrolled agent and perfSONAR node: is it alive, what runs it, how its TCP stack is
 * tuned, what a node offers and what is wrong with it; operators manage them.
 */
export function AgentsPage() {
  const canOperate = useCan("operator");
  const [enrolling, setEnrolling] = useState(false);
  const [addingNode, setAddingNode] = useState(false);
  const [addedNode, setAddedNode] = useState<PerfsonarNode | null>(null);
  return (
    <section>
      <div className="page-heading">
        <h1>Agents</h1>
        {canOperate && !enrolling && (
          <button
            type="button"
            className="primary"
            onClick={() => {
              setEnrolling(true);
            }}
          >
            Enrol an agent
          </button>
        )}
        {canOperate && !addingNode && (
          <button
            type="button"
            onClick={() => {
              setAddingNode(true);
              setAddedNode(null);
            }}
          >
            Add perfSONAR node
          </button>
        )}
      </div>
      {canOperate && addingNode && (
        <Panel title="Add perfSONAR node">
          <AddNodeForm
            onAdded={(node) => {
              setAddedNode(node);
              setAddingNode(false);
            }}
            onClose={() => {
              setAddingNode(false);
            }}
          />
        </Panel>
      )}
      {addedNode !== null && (
        <NodeAddedNotice
          node={addedNode}
          onDone={() => {
            setAddedNode(null);
          }}
        />
      )}
      {canOperate && enrolling && (
        <Panel title="Enrol an agent">
          <EnrolAgent
            onClose={() => {
              setEnrolling(false);
            }}
          />
        </Panel>
      )}
      <AgentList canOperate={canOperate} />
      {canOperate && (
        <Panel title="Enrolment tokens">
          <EnrollmentTokens />
        </Panel>
      )}
    </section>
  );
}
