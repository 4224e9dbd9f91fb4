import { describe, expect, it } from "vitest";

import type { RttPoint } from "../api/queries";
import { RTT_COLORS, bucketsOf, gapTimes, rttTraces, withGaps, type RttBucket } from "./rttTraces";

function bucket(t: string, p50: number | null, extra: Partial<RttBucket> = {}): RttBucket {
  return { t, min: p50 === null ? null : p50 - 0.2, p10: p50, p50, p90: p50, loss: 0, lost: 0, sent: 10, ...extra };
}

function point(time: string, min: number | null, median: number | null, sent = 10, lost = 0): RttPoint {
  return { time, rtt_min_ms: min, rtt_median_ms: median, sent, lost, loss_fraction: sent > 0 ? lost / sent : null };
}

describe("withGaps and gapTimes", () => {
  it("keep contiguous buckets as they are", () => {
    const rows = withGaps([bucket("2026-01-01T00:00:00Z", 8), bucket("2026-01-01T00:01:00Z", 9)], 60);
    expect(rows.map((row) => row?.t ?? null)).toEqual(["2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z"]);
  });

  it("break the line where the agent was silent, one bucket after the last point", () => {
    const rows = withGaps([bucket("2026-01-01T00:00:00Z", 8), bucket("2026-01-01T00:05:00Z", 9)], 60);
    expect(rows.map((row) => row?.t ?? null)).toEqual(["2026-01-01T00:00:00Z", null, "2026-01-01T00:05:00Z"]);
    expect(gapTimes(rows, 60)).toEqual(["2026-01-01T00:00:00Z", "2026-01-01T00:01:00.000Z", "2026-01-01T00:05:00Z"]);
  });
});

describe("rttTraces", () => {
  it("draws the band, median and min on the RTT axis and loss on its own, in one palette", () => {
    const traces = rttTraces([bucket("2026-01-01T00:00:00Z", 8, { loss: 0.1, lost: 1 })], 60, { rtt: "y3", loss: "y4" });
    expect(traces.map((trace) => trace.name ?? null)).toEqual([null, "RTT p10–p90", "RTT median", "RTT min", "loss"]);
    expect(traces.slice(0, 4).every((trace) => "yaxis" in trace && trace.yaxis === "y3")).toBe(true);
    const [, band, median, min, loss] = traces;
    expect(band).toMatchObject({ fill: "tonexty", fillcolor: RTT_COLORS.band, connectgaps: false });
    expect(median).toMatchObject({ line: { color: RTT_COLORS.median }, mode: "lines+markers" });
    expect(min).toMatchObject({ line: { color: RTT_COLORS.min, dash: "dot" } });
    expect(loss).toMatchObject({ type: "bar", yaxis: "y4", y: [10], marker: { color: RTT_COLORS.loss } });
  });

  it("names in the loss tooltip the pings left out during Fathom's own tests", () => {
    const traces = rttTraces(
      [bucket("2026-01-01T00:00:00Z", 8, { own_load: 4 }), bucket("2026-01-01T00:01:00Z", 8)],
      60,
    );
    expect(traces[4]).toMatchObject({
      customdata: [[0, 10, "; 4 during Fathom's own tests left out"], [0, 10, ""]],
    });
  });

  it("drops markers on dense series", () => {
    const start = Date.parse("2026-01-01T00:00:00Z");
    const many = Array.from({ length: 201 }, (_, i) => bucket(new Date(start + i * 60_000).toISOString(), 8));
    expect(rttTraces(many, 60)[2]).toMatchObject({ mode: "lines" });
  });
});

describe("bucketsOf", () => {
  it("reads /paths/rtt/'s min and median, with no band, and total loss as 100 %", () => {
    const buckets = bucketsOf([point("2026-01-01T00:00:00Z", 7.8, 8.1), point("2026-01-01T00:01:00Z", null, null, 10, 10)]);
    expect(buckets[0]).toEqual({ t: "2026-01-01T00:00:00Z", min: 7.8, p10: null, p50: 8.1, p90: null, loss: 0, lost: 0, sent: 10 });
    expect(buckets[1]).toMatchObject({ min: null, p50: null, loss: 1 });
    expect(rttTraces(buckets, 60)[4]).toMatchObject({ y: [0, 100] });
  });

  it("has no loss without packets", () => {
    expect(bucketsOf([point("2026-01-01T00:00:00Z", null, null, 0, 0)])[0]?.loss).toBe(0);
  });
});
