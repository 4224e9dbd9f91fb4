import { describe, expect, it } from "vitest";

import type { Agent } from "../api/queries";
import { agentCounts, agentsInOrder, isDecommissioned } from "./agents";

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
