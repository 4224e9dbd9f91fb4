import { describe, expect, it } from "vitest";

import type { AgentUtilization, Mesh } from "../api/queries";
import {
  choiceFor,
  countProblems,
  firstUpcoming,
  formatApproxSpan,
  formatRelative,
  formatShare,
  formatSpan,
  horizonSummary,
  isOverDemand,
  isProblem,
  membersSummary,
  shareBarPercent,
  slotLengthS,
  sortByDemand,
  testSchedule,
} from "./schedule";

function agent(name: string, demand: number, utilization = 0): AgentUtilization {
  return { agent: name, demand, utilization, planned_exclusive_s: 0, slots_planned: 0 };
}

function mesh(fields: Partial<Mesh>): Mesh {
  return { name: "m", kind: "mesh", ...fields };
}

describe("formatSpan", () => {
  it.each([
    [21_600, "6 h"],
    [90, "90 s"],
    [300, "5 min"],
    [5400, "90 min"],
    [86_400, "1 d"],
    [0, "0 s"],
    [0.2, "0.2 s"],
    [20.4, "20 s"],
    [-1, "–"],
    [null, "–"],
    [Number.NaN, "–"],
  ])("%s -> %s", (seconds, expected) => {
    expect(formatSpan(seconds)).toBe(expected);
  });
});

describe("formatApproxSpan", () => {
  it.each([
    [86_399.7, "24 h"],
    [5400, "1.5 h"],
    [1980, "33 min"],
    [45.4, "45 s"],
    [7200, "2 h"],
    [3 * 86_400, "3 d"],
    [-5, "–"],
  ])("%s -> %s", (seconds, expected) => {
    expect(formatApproxSpan(seconds)).toBe(expected);
  });
});

describe("formatShare and shareBarPercent", () => {
  it.each([
    [0, "0 %"],
    [0.0004, "< 0.1 %"],
    [0.0139, "1.4 %"],
    [0.05, "5 %"],
    [0.8, "80 %"],
    [0.9249, "92 %"],
    [1.3, "130 %"],
    [null, "–"],
  ])("%s -> %s", (fraction, expected) => {
    expect(formatShare(fraction)).toBe(expected);
  });

  it("clamps the bar to its box", () => {
    expect(shareBarPercent(1.3)).toBe(100);
    expect(shareBarPercent(0.25)).toBe(25);
    expect(shareBarPercent(-0.1)).toBe(0);
    expect(shareBarPercent(Number.NaN)).toBe(0);
  });
});

describe("demand", () => {
  it("flags agents above 80 %, not at it", () => {
    expect(isOverDemand(agent("a", 0.81))).toBe(true);
    expect(isOverDemand(agent("a", 0.8))).toBe(false);
  });

  it("sorts the busiest first, then by reserved time, then by name", () => {
    const sorted = sortByDemand([agent("dcc", 0.1), agent("dcb", 0.9), agent("dca", 0.1, 0.2), agent("dcd", 0.1)]);
    expect(sorted.map((row) => row.agent)).toEqual(["dcb", "dca", "dcc", "dcd"]);
  });

  it("leaves its input alone", () => {
    const rows = [agent("b", 0.1), agent("a", 0.5)];
    sortByDemand(rows);
    expect(rows.map((row) => row.agent)).toEqual(["b", "a"]);
  });
});

describe("horizonSummary", () => {
  const now = new Date("2026-11-22T12:00:00Z");

  it("gives the clock time on the same day", () => {
    expect(horizonSummary("2026-11-22T14:30:00Z", 9000, now)).toBe("planned until 14:30 UTC, 2.5 h ahead");
  });

  it("adds the date when the horizon ends another day", () => {
    expect(horizonSummary("2026-11-23T11:59:59.6Z", 86_399.6, now)).toBe(
      "planned until 2026-11-23 11:59 UTC, 24 h ahead",
    );
  });
});

describe("testSchedule", () => {
  it.each([
    [21_600, 21_600, "every 6 h, slip 6 h"],
    [300, 0, "every 5 min"],
    [3600, 900, "every 1 h, slip 15 min"],
  ])("interval %s s, slip %s s -> %s", (interval_s, slip_s, expected) => {
    expect(testSchedule({ interval_s, slip_s })).toBe(expected);
  });
});

describe("membersSummary", () => {
  it("says every agent for all_agents", () => {
    expect(membersSummary(mesh({ all_agents: true, members: [] }))).toBe("every agent");
  });

  it("lists a mesh's members by name", () => {
    const members = [
      { agent: "dcb", side: "a" as const },
      { agent: "dca", side: "a" as const },
    ];
    expect(membersSummary(mesh({ members }))).toBe("dca, dcb");
    expect(membersSummary(mesh({ members: [] }))).toBe("no members");
  });

  it("shows the two sides of a disjoint mesh and its direction", () => {
    const members = [
      { agent: "dca", side: "a" as const },
      { agent: "dcb", side: "b" as const },
      { agent: "dcc", side: "b" as const },
    ];
    expect(membersSummary(mesh({ kind: "disjoint", members }))).toBe("A: dca ↔ B: dcb, dcc");
    expect(membersSummary(mesh({ kind: "disjoint", unidirectional: true, members }))).toBe("A: dca → B: dcb, dcc");
  });

  it("shows a list mesh's external targets", () => {
    const members = [{ agent: "dca", side: "a" as const }];
    expect(membersSummary(mesh({ kind: "list", members, targets: ["ps.example.net", "192.0.2.1"] }))).toBe(
      "dca → targets: ps.example.net, 192.0.2.1",
    );
  });
});

describe("slots", () => {
  const now = new Date("2026-11-22T12:00:00Z");
  const slots = [
    { start_at: "2026-11-22T10:00:00Z", end_at: "2026-11-22T10:00:45Z", state: "missed" as const },
    { start_at: "2026-11-22T11:00:00Z", end_at: "2026-11-22T11:00:45Z", state: "ok" as const },
    { start_at: "2026-11-22T11:30:00Z", end_at: "2026-11-22T11:30:45Z", state: "missed" as const },
    { start_at: "2026-11-22T13:00:00Z", end_at: "2026-11-22T13:00:45Z", state: "unschedulable" as const },
    { start_at: "2026-11-22T14:00:00Z", end_at: "2026-11-22T14:00:45Z", state: "planned" as const },
  ];

  it("knows which states are problems", () => {
    expect(slots.map(isProblem)).toEqual([true, false, true, true, false]);
  });

  it("counts problems by state, without zeros", () => {
    expect(countProblems(slots)).toEqual([
      ["missed", 2],
      ["unschedulable", 1],
    ]);
    expect(countProblems([])).toEqual([]);
  });

  it("finds where the upcoming slots begin", () => {
    expect(firstUpcoming(slots, now)).toBe(3);
    expect(firstUpcoming(slots.slice(0, 2), now)).toBe(2);
    expect(firstUpcoming([], now)).toBe(0);
  });

  it("measures how long a slot holds its agents", () => {
    expect(slotLengthS(slots[0] ?? { start_at: "", end_at: "" })).toBe(45);
  });

  it("says when, relative to now", () => {
    expect(formatRelative("2026-11-22T12:05:00Z", now)).toBe("in 5 min");
    expect(formatRelative("2026-11-22T11:30:00Z", now)).toBe("30 min ago");
    expect(formatRelative("garbage", now)).toBe("–");
  });
});

describe("choiceFor", () => {
  const states = [{ value: "missed", label: "Missed", color: "#9a6700" }];

  it("finds the server's choice, or none", () => {
    expect(choiceFor(states, "missed")?.label).toBe("Missed");
    expect(choiceFor(states, "ok")).toBeNull();
    expect(choiceFor(undefined, "missed")).toBeNull();
  });
});
