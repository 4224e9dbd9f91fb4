import { describe, expect, it } from "vitest";

import type { Choice, Slot } from "../api/queries";
import { slotTimeline } from "./slotTimeline";

const STATES: Choice[] = [
  { value: "planned", label: "Planned", color: "#0969da" },
  { value: "ok", label: "OK", color: "#1a7f37" },
  { value: "missed", label: "Missed", color: "#9a6700" },
];

function slot(id: string, state: Slot["state"], source: string, destination: string, start: string): Slot {
  return {
    id,
    mesh: "default",
    test: "tput",
    source_agent: source,
    destination_agent: destination,
    test_type: "throughput",
    period_start: start,
    start_at: start,
    end_at: new Date(new Date(start).getTime() + 30_000).toISOString(),
    state,
    reason: state === "missed" ? "dcb's agent did not answer" : "",
    run_id: null,
  };
}

const NOW = new Date("2026-11-27T12:00:00Z");

describe("slotTimeline", () => {
  it("draws each slot on its sender's and its receiver's row, one trace per state in the server's order", () => {
    const figure = slotTimeline(
      [
        slot("1", "missed", "dcb", "dca", "2026-11-27T11:00:00Z"),
        slot("2", "ok", "dca", "dcc", "2026-11-27T11:10:00Z"),
        slot("3", "planned", "dca", "dcb", "2026-11-27T12:10:00Z"),
      ],
      STATES,
      NOW,
    );
    expect(figure.agents).toEqual(["dca", "dcb", "dcc"]);
    expect(figure.data.map((trace) => trace.name)).toEqual(["Planned", "OK", "Missed"]);
    const missed = figure.data[2] as { y: string[]; x: number[]; base: string[]; hovertext: string[]; marker: { color: string } };
    expect(missed.y).toEqual(["dcb", "dca"]);
    expect(missed.x).toEqual([30_000, 30_000]);
    expect(missed.base).toEqual(["2026-11-27T11:00:00Z", "2026-11-27T11:00:00Z"]);
    expect(missed.marker.color).toBe("#9a6700");
    expect(missed.hovertext[0]).toContain("sends to dca");
    expect(missed.hovertext[1]).toContain("receives from dcb");
    expect(missed.hovertext[0]).toContain("dcb's agent did not answer");
    expect(figure.layout.shapes?.[0]?.x0).toBe(NOW.toISOString());
  });

  it("grows with the agents and draws nothing for no slots", () => {
    const many = Array.from({ length: 100 }, (_, index) =>
      slot(String(index), "ok", `a${String(index).padStart(3, "0")}`, "hub", "2026-11-27T11:00:00Z"),
    );
    const figure = slotTimeline(many, STATES, NOW);
    expect(figure.agents).toHaveLength(101);
    expect(figure.height).toBeGreaterThan(2000);
    const empty = slotTimeline([], STATES, NOW);
    expect(empty.agents).toEqual([]);
    expect(empty.data).toEqual([]);
  });

  it("keeps a state the server did not label, in a neutral colour", () => {
    const figure = slotTimeline([slot("1", "failed", "a", "b", "2026-11-27T11:00:00Z")], STATES, NOW);
    expect(figure.data[0]?.name).toBe("failed");
  });
});
