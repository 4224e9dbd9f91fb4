// Agent states as the Agents page groups them: the server's status value, plus decommissioning.
import type { Agent } from "../api/queries";
import { formatBytes } from "./format";
import { parseHostFacts } from "./hostFacts";

/** Decommissioned agents keep their results but take no part any more. */
export function isDecommissioned(agent: Agent): boolean {
  return (agent.decommissioned_at ?? null) !== null || agent.status.value === "decommissioned";
}

export function isRevoked(agent: Agent): boolean {
  return (agent.revoked_at ?? null) !== null || agent.status.value === "revoked";
}

/** An agent that should be reporting and is not: what a NOC looks for first. */
export function isOffline(agent: Agent): boolean {
  return !isDecommissioned(agent) && agent.status.value === "offline";
}

export interface AgentCounts {
  live: number;
  online: number;
  offline: number;
  neverSeen: number;
  decommissioned: number;
}

export function agentCounts(agents: readonly Agent[]): AgentCounts {
  const counts: AgentCounts = { live: 0, online: 0, offline: 0, neverSeen: 0, decommissioned: 0 };
  for (const agent of agents) {
    if (isDecommissioned(agent)) {
      counts.decommissioned += 1;
      continue;
    }
    counts.live += 1;
    if (agent.status.value === "online") {
      counts.online += 1;
    } else if (agent.status.value === "offline") {
      counts.offline += 1;
    } else if (agent.status.value === "never_seen") {
      counts.neverSeen += 1;
    }
  }
  return counts;
}

/** The table's order: offline first (they need someone), then by name. */
export function agentsInOrder(agents: readonly Agent[], showDecommissioned: boolean): Agent[] {
  return agents
    .filter((agent) => showDecommissioned || !isDecommissioned(agent))
    .sort(
      (a, b) =>
        Number(isOffline(b)) - Number(isOffline(a)) ||
        Number(isDecommissioned(a)) - Number(isDecommissioned(b)) ||
        a.name.localeCompare(b.name),
    );
}

/** A clock further than this from the server's stamps results wrong (docs/metrics.md). */
export const CLOCK_WARN_S = 1;
/** A spool this full is more than the few results between two uploads. */
export const SPOOL_WARN_RESULTS = 100;

/** What an agent last said of itself that a NOC should look at: a clock off or not
 * synchronized, a full spool. */
export function agentWarnings(agent: Agent): string[] {
  if (isDecommissioned(agent) || isRevoked(agent)) {
    return [];
  }
  const warnings: string[] = [];
  const offset = agent.clock_offset_s ?? null;
  if (offset !== null && Math.abs(offset) >= CLOCK_WARN_S) {
    warnings.push(`clock ${Math.abs(offset).toFixed(1)} s ${offset > 0 ? "ahead of" : "behind"} the server's`);
  }
  // The offset above is judged in seconds; one-way delays are milliseconds, which an
  // unsynchronized clock cannot vouch for however close it is.
  if (parseHostFacts(agent.host_facts)?.clock.state === "unsynchronized") {
    warnings.push("clock not synchronized: one-way delays not trusted");
  }
  const spooled = agent.spool_results ?? null;
  if (spooled !== null && spooled >= SPOOL_WARN_RESULTS) {
    warnings.push(`${spooled.toLocaleString("en")} results (${formatBytes(agent.spool_bytes ?? 0)}) waiting to upload`);
  }
  return warnings;
}
