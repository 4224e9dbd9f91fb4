import { describe, expect, it } from "vitest";

import { DESTINATION, FINDING, SOURCE } from "../test/analysisFixtures";
import { TIMELINE } from "../test/timelineFixtures";
import type { PathLatency } from "../api/latencyQueries";
import { historyFigure, rowDomains, spanningXAxis, type PathHistory } from "./historyFigure";
import { withGaps } from "./rttTraces";

function rtt(t: string, p50: number) {
  return { t, min: p50 - 1, p10: p50 - 0.5, p50, p90: p50 + 2, max: p50 + 5, count: 60, sent: 60, lost: 3, loss: 0.05, own_load: 0 };
}

function tput(t: string, median: number) {
  return { t, runs_ok: 2, runs_failed: 0, min_bps: median * 0.9, median_bps: median, max_bps: median * 1.1, retransmits: 4 };
}

const HISTORY: PathHistory = {
  source: SOURCE,
  destination: DESTINATION,
  family: 4,
  resolution: "hour",
  bucket_s: 3600,
  from: "2026-11-22T00:00:00Z",
  to: "2026-11-22T12:00:00Z",
  rtt: [rtt("2026-11-22T01:00:00Z", 8), rtt("2026-11-22T02:00:00Z", 8.2), rtt("2026-11-22T06:00:00Z", 12)],
  throughput: [tput("2026-11-22T01:00:00Z", 3e9)],
  reverse: { rtt: [], throughput: [tput("2026-11-22T02:00:00Z", 2e9)] },
};

describe("historyFigure", () => {
  it("puts throughput both ways, retransmits, RTT percentiles and loss on rows of one time axis", () => {
    const figure = historyFigure(HISTORY, [], []);
    const names = figure.data.map((trace) => trace.name).filter((name) => name !== undefined);
    expect(names).toEqual([
      "dca → dcb min–max", "dca → dcb throughput", "dca → dcb retransmits",
      "dcb → dca min–max", "dcb → dca throughput", "dcb → dca retransmits",
      "RTT p10–p90", "RTT median", "RTT min", "loss",
    ]);
    const axes = new Set(figure.data.map((trace) => (trace as { yaxis?: string }).yaxis));
    expect(axes).toEqual(new Set(["y", "y2", "y3", "y4"]));
    expect(figure.layout.xaxis?.autorange).toBe(true);
  });

  it("gives data within two buckets a bucket either side, and spans wider data as it is", () => {
    const one = spanningXAxis(["2026-11-27T11:10:00Z"], 120, "y2");
    expect(one.range).toEqual(["2026-11-27T11:08:00.000Z", "2026-11-27T11:12:00.000Z"]);
    expect(one.autorange).toBeUndefined();
    expect(spanningXAxis(["2026-11-27T11:00:00Z", "2026-11-27T12:00:00Z"], 60, "y4").autorange).toBe(true);
    expect(spanningXAxis([], 60, "y4").autorange).toBe(true);
  });

  it("breaks the RTT lines across a time without data", () => {
    const median = historyFigure(HISTORY, [], []).data.find((trace) => trace.name === "RTT median") as {
      y: (number | null)[];
    };
    expect(median.y).toEqual([8, 8.2, null, 12]);
  });

  it("marks failed runs with their reason and shades findings across every row", () => {
    const failed = [{ started_at: "2026-11-22T03:00:00Z", test_type: "throughput", status: "failed", error: "iperf3: refused" }];
    const figure = historyFigure(HISTORY, failed, [FINDING]);
    const marks = figure.data.find((trace) => trace.name === "failed runs") as { hovertext: string[] };
    expect(marks.hovertext).toEqual(["throughput failed: iperf3: refused"]);
    expect(figure.layout.shapes).toHaveLength(1);
    expect(figure.layout.shapes?.[0]?.x1).toBe(HISTORY.to); // still open: to the range's end
  });
});

describe("historyFigure with the path's timeline", () => {
  it("adds runs, ceilings and ECMP modes to their rows, and rows for changes and the modes' share", () => {
    const figure = historyFigure(HISTORY, [], [], TIMELINE);
    const names = figure.data.map((trace) => trace.name);
    expect(names).toEqual(expect.arrayContaining([
      "dca → dcb ceiling (1 stream)", "dca → dcb TCP runs", "dca → dcb UDP runs", "dcb → dca TCP runs",
      "ECMP mode 1 (fastest)", "ECMP mode 2", "tuning changes", "iperf3 changes", "findings",
    ]));
    const axes = new Set(figure.data.map((trace) => (trace as { yaxis?: string }).yaxis));
    expect(axes).toEqual(new Set(["y", "y2", "y3", "y4", "y5", "y6"]));
    // Still one x axis; the changes row on top, loss at the bottom.
    expect(Object.keys(figure.layout).filter((key) => key.startsWith("xaxis"))).toEqual(["xaxis"]);
    expect(figure.layout.yaxis5?.domain?.[1]).toBe(1);
    expect(figure.layout.yaxis4?.domain?.[0]).toBe(0);
    // The timeline's findings (both directions) shade the spans; tuning and iperf3 changes are lines.
    expect(figure.layout.shapes?.map((shape) => shape.type)).toEqual(["rect", "line", "line"]);
  });

  it("greys the moments of Fathom's own throughput tests over the ping rows, on minute rollups only", () => {
    const minutes: PathHistory = { ...HISTORY, resolution: "minute", bucket_s: 60 };
    const figure = historyFigure(minutes, [], [], TIMELINE);
    const grey = (figure.layout.shapes ?? []).filter((shape) => shape.fillcolor === "rgba(110, 119, 129, 0.16)");
    expect(grey.map((shape) => [shape.x0, shape.x1])).toEqual([
      ["2026-11-22T02:00:00Z", "2026-11-22T02:00:13Z"],
      ["2026-11-22T02:30:00Z", "2026-11-22T02:30:29Z"],
    ]);
    // From the bottom of the loss row to the top of the RTT row, not over throughput.
    expect(grey[0]?.y0).toBe(figure.layout.yaxis4?.domain?.[0]);
    expect(grey[0]?.y1).toBe(figure.layout.yaxis3?.domain?.[1]);
    expect(figure.data.map((trace) => trace.name)).toContain(
      "own throughput test on either host (pings left out of the analysis)",
    );
    // Hour rollups: seconds-long spans would be hairlines, so none.
    expect(historyFigure(HISTORY, [], [], TIMELINE).layout.shapes?.map((shape) => shape.type)).toEqual(["rect", "line", "line"]);
  });

  it("leaves out the rows it has nothing for", () => {
    const quiet = { ...TIMELINE, tuning_changes: [], iperf3_changes: [], findings: [],
      forward: { ...TIMELINE.forward, sweeps: [] } };  // prettier-ignore
    const layout = historyFigure(HISTORY, [], [], quiet).layout;
    expect([layout.yaxis5, layout.yaxis6]).toEqual([undefined, undefined]);
  });
});

describe("historyFigure of a path measured by its latency test alone", () => {
  const quiet: PathHistory = { ...HISTORY, rtt: [], throughput: [], reverse: { rtt: [], throughput: [] } };
  const latency: PathLatency = {
    source: SOURCE, destination: DESTINATION, family: 4, start: HISTORY.from, end: HISTORY.to, bucket_s: 60,
    clock_error_limit_ms: 0.5,
    points: [{
      time: "2026-11-22T01:00:00Z", sent: 600, answered: 600, forward_lost: 0, backward_lost: null,
      forward_loss_fraction: 0, backward_loss_fraction: null, forward_min_ms: 2.5, forward_p50_ms: 2.6,
      forward_p90_ms: 2.8, forward_p99_ms: 3, forward_max_ms: 3.1, backward_min_ms: null, backward_p50_ms: null,
      backward_p90_ms: null, backward_p99_ms: null, backward_max_ms: null, round_trip_min_ms: null,
      round_trip_p50_ms: null, round_trip_p99_ms: null, clock_error_ms: 0.002, one_way_trusted: true, loaded: false,
    }],
  };  // prettier-ignore

  it("draws the one-way rows without empty throughput and RTT rows above them", () => {
    // Minute rollups and a timeline with Fathom's own load, but no runs, sweeps or changes.
    const timeline = { ...TIMELINE, tuning_changes: [], iperf3_changes: [], findings: [],
      forward: { ...TIMELINE.forward, runs: [], sweeps: [] }, reverse: { ...TIMELINE.reverse, runs: [], sweeps: [] } };  // prettier-ignore
    const figure = historyFigure({ ...quiet, resolution: "minute", bucket_s: 60 }, [], [], timeline, undefined, latency);
    expect(figure.layout.yaxis).toBeUndefined();
    expect(figure.layout.yaxis3).toBeUndefined();
    expect(figure.layout.yaxis7?.domain?.[1]).toBe(1);
    const axes = new Set(figure.data.map((trace) => (trace as { yaxis?: string }).yaxis));
    expect([...axes].every((axis) => axis === "y7" || axis === "y8")).toBe(true);
  });

  it("keeps the throughput and RTT rows once the path has pings", () => {
    const pinged = { ...quiet, rtt: HISTORY.rtt };
    const figure = historyFigure(pinged, [], [], null, undefined, latency);
    expect(figure.layout.yaxis?.domain?.[1]).toBe(1);
    expect(figure.layout.yaxis7).toBeDefined();
  });
});

describe("rowDomains", () => {
  it("stacks the drawn rows top to bottom without overlap, in proportion to their weights", () => {
    const domains = rowDomains(["throughput", "retransmits", "rtt", "loss"]);
    expect(domains.throughput?.[1]).toBe(1);
    expect(domains.loss?.[0]).toBe(0);
    const ordered = [domains.throughput, domains.retransmits, domains.rtt, domains.loss];
    for (let k = 1; k < ordered.length; k += 1) {
      expect((ordered[k]?.[1] ?? 1) < (ordered[k - 1]?.[0] ?? 0)).toBe(true);
    }
  });
});

describe("withGaps", () => {
  it("inserts one null where buckets are more than one and a half widths apart", () => {
    const points = [{ t: "2026-11-22T00:00:00Z" }, { t: "2026-11-22T00:01:00Z" }, { t: "2026-11-22T00:05:00Z" }];
    expect(withGaps(points, 60).map((point) => point?.t ?? null)).toEqual([
      "2026-11-22T00:00:00Z", "2026-11-22T00:01:00Z", null, "2026-11-22T00:05:00Z",
    ]);
  });
});
