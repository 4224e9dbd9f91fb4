import { describe, expect, it } from "vitest";

import type { Agent } from "../../api/queries";
import {
  formatClockOffset,
  isClockSkewed,
  mergeAgentRows,
  nodeCounts,
  rowsInOrder,
  shortFingerprint,
  taskCounts,
  tlsModeLabel,
} from "./nodes";
import { nodeFixture } from "./testFixtures";

function agent(name: string, extra: Partial<Agent> = {}): Agent {
  return {
    id: `id-${name}`,
    name,
    kind: "fathom",
    address: "198.18.1.2",
    status: { value: "online", label: "Online", color: "#1a7f37" },
    ...extra,
  };
}

describe("clock offset", () => {
  it("is skewed beyond ±1 s only", () => {
    expect(isClockSkewed(null)).toBe(false);
    expect(isClockSkewed(undefined)).toBe(false);
    expect(isClockSkewed(1)).toBe(false);
    expect(isClockSkewed(-1)).toBe(false);
    expect(isClockSkewed(1.2)).toBe(true);
    expect(isClockSkewed(-3)).toBe(true);
  });

  it("reads signed, with precision that suits it", () => {
    expect(formatClockOffset(0.004)).toBe("+0.004 s");
    expect(formatClockOffset(-1.8)).toBe("−1.80 s");
    expect(formatClockOffset(null)).toBe("–");
    expect(formatClockOffset(Number.NaN)).toBe("–");
  });
});

describe("TLS", () => {
  it("shortens a fingerprint, with or without colons", () => {
    const hex = "3fa2b1c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e9e0d";
    expect(shortFingerprint(hex)).toBe("3fa2b1c4…9e0d");
    expect(shortFingerprint("3F:A2:B1:C4:D5:E6:F7:08:19:2A:9E:0D")).toBe("3fa2b1c4…9e0d");
    expect(shortFingerprint("abcd")).toBe("abcd");
  });

  it("labels each mode, and an unknown one as it is", () => {
    expect(tlsModeLabel("pinned")).toBe("Pinned SHA-256 fingerprint");
    expect(tlsModeLabel("dane")).toBe("dane");
    expect(tlsModeLabel(undefined)).toBe("–");
  });
});

describe("mergeAgentRows", () => {
  it("pairs each perfsonar agent with its node, and keeps nodes the agents list lacks", () => {
    const rows = mergeAgentRows(
      [agent("athens", { kind: "fathom" }), agent("ps-lon", { kind: "perfsonar" })],
      [nodeFixture("ps-lon"), nodeFixture("ps-ams")],
    );
    expect(rows.map((row) => [row.name, row.kind, row.agent !== null, row.node !== null])).toEqual([
      ["athens", "fathom", true, false],
      ["ps-lon", "perfsonar", true, true],
      ["ps-ams", "perfsonar", false, true],
    ]);
  });


  it("shows agents alone while the nodes have not loaded", () => {
    expect(mergeAgentRows([agent("athens")], undefined).map((row) => row.kind)).toEqual(["fathom"]);
  });

  it("never gives a Fathom agent a node's details, even when the names match", () => {
    const [row] = mergeAgentRows([agent("ps-lon", { kind: "fathom" })], [nodeFixture("ps-lon")]);
    expect(row?.node).toBeNull();
  });
});

describe("rowsInOrder and nodeCounts", () => {
  const rows = mergeAgentRows(
    [
      agent("athens", { kind: "fathom" }),
      agent("berlin", { kind: "fathom", status: { value: "offline", label: "Offline", color: "#cf222e" } }),
      agent("ps-ams", { kind: "perfsonar" }),
      agent("ps-lon", { kind: "perfsonar" }),
      agent("ps-old", { kind: "perfsonar", decommissioned_at: "2026-01-01T00:00:00Z" }),
      agent("ps-skew", { kind: "perfsonar" }),
    ],
    [
      nodeFixture("ps-ams"),
      nodeFixture("ps-lon", { reachable: false, problems: ["unreachable: connection refused"] }),
      nodeFixture("ps-skew", { clock_offset_s: 2.5 }),
    ],
  );

  it("puts offline agents and troubled nodes first, decommissioned ones only on demand", () => {
    expect(rowsInOrder(rows, false).map((row) => row.name)).toEqual([
      "berlin",
      "ps-lon",
      "ps-skew",
      "athens",
      "ps-ams",
    ]);
    expect(rowsInOrder(rows, true).map((row) => row.name).at(-1)).toBe("ps-old");
  });

  it("counts live nodes and the unreachable ones", () => {
    expect(nodeCounts(rows)).toEqual({ live: 3, unreachable: 1 });
  });
});

describe("task counts", () => {
  it("name unanswered tasks only when there are some", () => {
    expect(taskCounts({ active: 3, refused: 1, unanswered: 0 })).toBe("3");
    expect(taskCounts({ active: 3, refused: 0, unanswered: 2 })).toBe("3 + 2 unanswered");
  });
});
