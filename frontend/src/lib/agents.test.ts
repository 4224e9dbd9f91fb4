import { describe, expect, it } from "vitest";

import type { Agent } from "../api/queries";
import { agentCounts, agentsInOrder, agentWarnings, isDecommissioned } from "./agents";

function agent(name: string, status: string, extra: Partial<Agent> = {}): Agent {
  return {
    id: name,
    name,
    address: "198.18.0.1",
    status: { value: status, label: status, color: "#000" },
    ...extra,
  };
}

const AGENTS = [
  agent("bravo", "online"),
  agent("alpha", "online"),
  agent("zulu", "offline"),
  agent("old", "decommissioned", { decommissioned_at: "2025-01-01T00:00:00Z" }),
  agent("new", "never_seen"),
];

describe("agentCounts", () => {
  it("counts live agents by state and decommissioned apart", () => {
    expect(agentCounts(AGENTS)).toEqual({ live: 4, online: 2, offline: 1, neverSeen: 1, decommissioned: 1 });
  });
});

describe("agentsInOrder", () => {
  it("puts offline agents first and hides decommissioned ones unless asked", () => {
    expect(agentsInOrder(AGENTS, false).map((a) => a.name)).toEqual(["zulu", "alpha", "bravo", "new"]);
    expect(agentsInOrder(AGENTS, true).map((a) => a.name)).toEqual(["zulu", "alpha", "bravo", "new", "old"]);
  });
});

describe("isDecommissioned", () => {
  it("reads the timestamp or the status", () => {
    expect(isDecommissioned(agent("a", "decommissioned"))).toBe(true);
    expect(isDecommissioned(agent("a", "offline", { decommissioned_at: "2025-01-01T00:00:00Z" }))).toBe(true);
    expect(isDecommissioned(agent("a", "offline", { decommissioned_at: null }))).toBe(false);
  });
});

describe("agentWarnings", () => {
  it("flags a clock a second or more off and a spool that is not draining", () => {
    expect(agentWarnings(agent("a", "online", { clock_offset_s: -2.54, spool_results: 340, spool_bytes: 1_258_291 }))).toEqual([
      "clock 2.5 s behind the server's",
      "340 results (1.20 MiB) waiting to upload",
    ]);
    expect(agentWarnings(agent("b", "online", { clock_offset_s: 0.004, spool_results: 3, spool_bytes: 9000 }))).toEqual([]);
    expect(agentWarnings(agent("c", "online", { clock_offset_s: 1.2 }))).toEqual(["clock 1.2 s ahead of the server's"]);
  });

  it("flags a clock its host facts say is not synchronized, however close to the server's", () => {
    const facts = (synchronized: boolean, readable = true) => ({
      collected_at: "2026-11-24T07:00:00Z",
      clock: { synchronized, max_error_ms: readable ? 0.4 : null, source: "kernel", readable },
    });
    expect(agentWarnings(agent("f", "online", { clock_offset_s: 0.004, host_facts: facts(false) }))).toEqual([
      "clock not synchronized: one-way delays not trusted",
    ]);
    expect(agentWarnings(agent("g", "online", { host_facts: facts(true) }))).toEqual([]);
    expect(agentWarnings(agent("h", "online", { host_facts: facts(false, false) }))).toEqual([]);
  });

  it("says nothing of what an agent did not report, nor of a retired one", () => {
    expect(agentWarnings(agent("d", "online"))).toEqual([]);
    expect(agentWarnings(agent("e", "revoked", { revoked_at: "2026-01-01T00:00:00Z", clock_offset_s: 9 }))).toEqual([]);
  });
});
