// The Agents page's perfSONAR logic, apart from React: Fathom agents and perfSONAR nodes as
// one list (a node is an agent of kind perfsonar, described further by the nodes API), their
// order, and how a node's TLS settings and clock read.
import type { AgentKind, PerfsonarNode, TlsMode } from "../../api/perfsonar";
import type { Agent } from "../../api/queries";
import { isDecommissioned, isOffline } from "../../lib/agents";

/** pScheduler schedules runs at agreed absolute times: beyond this skew, runs start wrong or not at all. */
export const CLOCK_SKEW_LIMIT_S = 1;

export const TLS_MODES: readonly { value: TlsMode; label: string; hint: string }[] = [
  { value: "system", label: "System CAs", hint: "the node's certificate is signed by a CA this server trusts" },
  { value: "ca_bundle", label: "CA bundle", hint: "trust only the CA certificates given here (PEM)" },
  {
    value: "pinned",
    label: "Pinned SHA-256 fingerprint",
    hint: "accept exactly this certificate: for self-signed nodes",
  },
];

export function tlsModeLabel(mode: string | undefined): string {
  return TLS_MODES.find((choice) => choice.value === mode)?.label ?? mode ?? "–";
}

/** A fingerprint short enough for a table: first 8 and last 4 hex digits. */
export function shortFingerprint(sha256: string): string {
  const hex = sha256.replace(/[^0-9a-f]/giu, "").toLowerCase();
  return hex.length <= 16 ? hex : `${hex.slice(0, 8)}…${hex.slice(-4)}`;
}

export function isClockSkewed(offsetS: number | null | undefined): boolean {
  return offsetS !== null && offsetS !== undefined && Math.abs(offsetS) > CLOCK_SKEW_LIMIT_S;
}

/** The tasks button's count: active tasks, and those whose POST got no answer yet. */
export function taskCounts(tasks: PerfsonarNode["tasks"]): string {
  const active = String(tasks.active);
  return tasks.unanswered > 0 ? `${active} + ${String(tasks.unanswered)} unanswered` : active;
}

/** The node's clock against Fathom's, signed: "+0.004 s", "−1.80 s". */
export function formatClockOffset(offsetS: number | null | undefined): string {
  if (offsetS === null || offsetS === undefined || !Number.isFinite(offsetS)) {
    return "–";
  }
  const abs = Math.abs(offsetS);
  const digits = abs < 0.1 ? 3 : 2;
  return `${offsetS < 0 ? "−" : "+"}${abs.toFixed(digits)} s`;
}

/**
 * One row of the Agents table: a Fathom agent, or a perfSONAR node with its agent row (null
 * when the agents list lacks it) and its node row (null once the node is removed).
 */
export interface AgentsRow {
  key: string;
  name: string;
  kind: AgentKind;
  agent: Agent | null;
  node: PerfsonarNode | null;
}

/**
 * Agents and nodes as one list: each agents-list row says its kind, and a perfsonar row takes
 * its node's details. A node the agents list lacks (registered since it loaded) still shows.
 */
export function mergeAgentRows(agents: readonly Agent[], nodes: readonly PerfsonarNode[] | undefined): AgentsRow[] {
  const nodesByName = new Map((nodes ?? []).map((node) => [node.name, node]));
  const rows: AgentsRow[] = agents.map((agent) => {
    // The server always sends `kind`; the schema leaves it optional because the model has a default.
    const kind: AgentKind = agent.kind ?? "fathom";
    const node = kind === "perfsonar" ? (nodesByName.get(agent.name) ?? null) : null;
    return { key: agent.id, name: agent.name, kind, agent, node };
  });
  const listed = new Set(rows.filter((row) => row.kind === "perfsonar").map((row) => row.name));
  for (const node of nodes ?? []) {
    if (!listed.has(node.name)) {
      rows.push({ key: `node:${node.name}`, name: node.name, kind: "perfsonar", agent: null, node });
    }
  }
  return rows;
}

export function isRowDecommissioned(row: AgentsRow): boolean {
  return row.agent !== null && isDecommissioned(row.agent);
}

/** A node whose removal a worker is still carrying out (deleting its tasks from the node). */
export function isBeingRemoved(row: AgentsRow): boolean {
  return (row.node?.removing_since ?? null) !== null;
}

/** A node that cannot be reached or reports problems: what a NOC looks at first, as an offline agent. */
export function nodeNeedsAttention(node: PerfsonarNode): boolean {
  return node.reachable === false || node.problems.length > 0 || isClockSkewed(node.clock_offset_s);
}

export function rowNeedsAttention(row: AgentsRow): boolean {
  if (isRowDecommissioned(row)) {
    return false;
  }
  if (row.kind === "perfsonar") {
    return row.node !== null && nodeNeedsAttention(row.node);
  }
  return row.agent !== null && isOffline(row.agent);
}

/** The table's order: what needs someone first, decommissioned last, then by name. */
export function rowsInOrder(rows: readonly AgentsRow[], showDecommissioned: boolean): AgentsRow[] {
  return rows
    .filter((row) => showDecommissioned || !isRowDecommissioned(row) || isBeingRemoved(row))
    .sort(
      (a, b) =>
        Number(rowNeedsAttention(b)) - Number(rowNeedsAttention(a)) ||
        Number(isRowDecommissioned(a)) - Number(isRowDecommissioned(b)) ||
        a.name.localeCompare(b.name),
    );
}

export interface NodeCounts {
  /** Nodes not decommissioned. */
  live: number;
  unreachable: number;
}

export function nodeCounts(rows: readonly AgentsRow[]): NodeCounts {
  const live = rows.filter((row) => row.kind === "perfsonar" && !isRowDecommissioned(row));
  return { live: live.length, unreachable: live.filter((row) => row.node?.reachable === false).length };
}
