import { describe, expect, it } from "vitest";

import type { RttPoint } from "../api/queries";
import { rttTraces, summarize, toPlotPoints } from "./rttTraces";

function point(time: string, min: number | null, median: number | null, sent = 10, lost = 0): RttPoint {
  return {
    time,
    rtt_min_ms: min,
    rtt_median_ms: median,
    sent,
    lost,
    loss_fraction: sent > 0 ? lost / sent : null,
  };
}

describe("toPlotPoints", () => {
  it("keeps contiguous buckets as they are", () => {
    const columns = toPlotPoints(
      [point("2026-11-22T12:00:00Z", 7.8, 7.9), point("2026-11-22T12:01:00Z", 11.9, 12.0)],
      60,
    );
    expect(columns.time).toEqual(["2026-11-22T12:00:00Z", "2026-11-22T12:01:00Z"]);
    expect(columns.min).toEqual([7.8, 11.9]);
    expect(columns.lossPercent).toEqual([0, 0]);
  });

  it("breaks the line where the agent was silent", () => {
    const columns = toPlotPoints(
      [point("2026-11-22T12:00:00Z", 7.8, 7.9), point("2026-11-22T12:10:00Z", 7.8, 7.9)],
      60,
    );
    expect(columns.time).toEqual([
      "2026-11-22T12:00:00Z",
      "2026-11-22T12:01:00.000Z",
      "2026-11-22T12:10:00Z",
    ]);
    expect(columns.median).toEqual([7.9, null, 7.9]);
  });

  it("shows total loss as 100 % with no RTT", () => {
    const columns = toPlotPoints([point("2026-11-22T12:00:00Z", null, null, 10, 10)], 60);
    expect(columns.lossPercent).toEqual([100]);
    expect(columns.min).toEqual([null]);
  });
});

describe("rttTraces", () => {
  it("draws min, median and loss on a second axis", () => {
    const traces = rttTraces([point("2026-11-22T12:00:00Z", 7.8, 7.9)], 60);
    expect(traces.map((trace) => trace.name)).toEqual(["min RTT", "median RTT", "loss"]);
    expect(traces[2]).toMatchObject({ type: "bar", yaxis: "y2" });
  });

  it("drops markers on dense series", () => {
    const many = Array.from({ length: 400 }, (_, i) =>
      point(new Date(Date.UTC(2026, 10, 22, 0, i)).toISOString(), 7.8, 7.9),
    );
    expect(rttTraces(many, 60)[0]).toMatchObject({ mode: "lines" });
  });
});

describe("summarize", () => {
  it("reports the lowest RTT, the newest median and the loss over the window", () => {
    const summary = summarize([
      point("2026-11-22T12:00:00Z", 7.8, 7.95, 10, 0),
      point("2026-11-22T12:01:00Z", 11.9, 12.1, 10, 1),
      point("2026-11-22T12:02:00Z", null, null, 10, 10),
    ]);
    expect(summary).toEqual({ minMs: 7.8, latestMedianMs: 12.1, sent: 30, lost: 11, lossFraction: 11 / 30 });
  });

  it("has no loss figure without packets", () => {
    expect(summarize([]).lossFraction).toBeNull();
  });
});
