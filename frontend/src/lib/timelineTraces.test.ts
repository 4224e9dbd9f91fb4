import { describe, expect, it } from "vitest";

import { TIMELINE, timelineRun } from "../test/timelineFixtures";
import {
  ceilingTraces,
  changeLines,
  clickedFinding,
  eventTraces,
  modeTraces,
  runHover,
  runKind,
  runTraces,
  tuningHover,
} from "./timelineTraces";

interface Trace {
  name?: string;
  x: string[];
  y: (number | null)[];
  hovertext: string[];
  marker: { symbol: string[] | string; size: number[] | number };
  line: { shape?: string };
  customdata?: unknown[];
  showlegend?: boolean;
}

describe("runTraces", () => {
  it("draws TCP, paced and UDP runs apart, open for one stream and filled for several", () => {
    const traces = runTraces(TIMELINE.forward.runs, "dca → dcb", "#1f77b4", "y") as unknown as Trace[];
    expect(traces.map((trace) => trace.name)).toEqual(["dca → dcb TCP runs", "dca → dcb UDP runs"]);
    const tcp = traces[0];
    expect(tcp?.marker.symbol).toEqual(["circle-open", "circle-open", "circle"]);
    expect(tcp?.marker.size).toEqual([7, 7, 9]);
    expect(traces[1]?.marker.symbol).toEqual(["diamond-open"]);
    const paced = runTraces([timelineRun("2026-11-22T01:00:00Z", 1e9, { paced: true })], "a", "#000", "y") as unknown as Trace[];
    expect(paced.map((trace) => trace.name)).toEqual(["a paced TCP runs"]);
  });

  it("says on hover what bounded each run, and what a UDP run offered and lost", () => {
    expect(runHover(TIMELINE.forward.runs[0] ?? timelineRun("", 0))).toBe(
      "3.2 Gbit/s TCP, 1 stream<br>receive window; 97 % of 3.3 Gbit/s (Receive window)<br>iperf3 3.12 on dca",
    );
    const udp = TIMELINE.forward.runs[3] ?? timelineRun("", 0);
    expect(runKind(udp)).toBe("udp");
    expect(runHover(udp)).toContain("offered 500 Mbit/s, lost 10 %");
  });

  it("draws a policer ramp as its own kind at the rate it measured, each step on hover", () => {
    const steps = [
      { offered_bps: 6e7, delivered_bps: 6e7, lost_fraction: 0 },
      { offered_bps: 1.35e8, delivered_bps: 9.02e7, lost_fraction: 0.332 },
    ];
    const ramp = timelineRun("2026-11-22T08:00:00Z", 9e7, {
      protocol: "udp", paced: true, ramp: steps, ramp_lower_bound: false, diagnosis: null, limit: null,
      ceiling_bps: null, ceiling_under_load_bps: null, terms: null,
    });  // prettier-ignore
    expect(runKind(ramp)).toBe("ramp");
    const traces = runTraces([ramp], "a", "#000", "y") as unknown as Trace[];
    expect(traces.map((trace) => trace.name)).toEqual(["a policer ramps"]);
    expect(traces[0]?.marker.symbol).toEqual(["triangle-up-open"]);
    expect(runHover(ramp)).toBe(
      "policer about 90 Mbit/s (UDP ramp, 2 steps)<br>offered 60 Mbit/s → 60 Mbit/s, lost 0 %<br>" +
        "offered 135 Mbit/s → 90.2 Mbit/s, lost 33 %<br>iperf3 3.12 on dca",
    );
    expect(runHover({ ...ramp, ramp_lower_bound: true })).toContain("policer at least 90 Mbit/s");
  });
});

describe("ceilingTraces", () => {
  it("steps each stream count's ceiling from run to run with a band to the ceiling under load", () => {
    const traces = ceilingTraces(TIMELINE.forward.runs, "dca → dcb", "#1f77b4", "rgba(0,0,0,0.1)", "y") as unknown as Trace[];
    // 1 and 8 streams: two pairs (band floor, ceiling); the UDP run has none.
    expect(traces.filter((trace) => trace.showlegend !== false).map((trace) => trace.name)).toEqual([
      "dca → dcb ceiling (1 stream)", "dca → dcb ceiling (8 streams)",
    ]);
    const [floor, ceiling] = traces;
    expect(ceiling?.y).toEqual([3.3e9, 6.6e9]); // the retune between the runs is a step
    expect(floor?.y).toEqual([3.1e9, 6.2e9]);
    expect(ceiling?.line.shape).toBe("hv");
    expect(ceiling?.hovertext[0]).toContain("Receive window 3.3 Gbit/s");
  });
});

describe("modeTraces", () => {
  it("draws each ECMP mode as a labelled RTT line and its share of flows on its own row", () => {
    const traces = modeTraces(TIMELINE.forward.sweeps, "y3", "y6") as unknown as (Trace & { yaxis: string })[];
    expect(traces.map((trace) => [trace.name, trace.yaxis])).toEqual([
      ["ECMP mode 1 (fastest)", "y3"], ["ECMP mode 1 (fastest) share", "y6"],
      ["ECMP mode 2", "y3"], ["ECMP mode 2 share", "y6"],
    ]);
    expect(traces[2]?.y).toEqual([12, null]);
    expect(traces[1]?.y).toEqual([75, 100]);
    expect(traces[2]?.hovertext[0]).toBe("ECMP mode 2: 12.00 ms, 25 % of flows (4)");
  });

  it("draws nothing when no sweep saw two modes", () => {
    expect(modeTraces([TIMELINE.forward.sweeps[1] ?? { t: "", verdict: "single", modes: [] }], "y3", "y6")).toEqual([]);
  });
});

describe("eventTraces", () => {
  it("marks tuning and iperf3 changes with their diff, and findings with a click target", () => {
    const traces = eventTraces(TIMELINE, "dca → dcb", "dcb → dca", "y5") as unknown as Trace[];
    expect(traces.map((trace) => trace.name)).toEqual(["tuning changes", "iperf3 changes", "findings"]);
    expect(traces[0]?.hovertext[0]).toBe(
      "dcb's tuning changed<br>kernel: 6.1 → 6.12<br>net.ipv4.tcp_rmem: 4096 131072 6291456 → 4096 131072 12582912",
    );
    expect(traces[1]?.hovertext[0]).toBe("iperf3 on dca: 3.12 → 3.16");
    expect(traces[2]?.hovertext[0]).toContain("click for the evidence");
    expect(clickedFinding([{ customdata: traces[2]?.customdata?.[0] }])).toBe(7);
    expect(clickedFinding([{ customdata: [1, 2] }, {}])).toBeNull();
    expect(changeLines(TIMELINE).map((line) => line.x0)).toEqual(["2026-11-22T04:00:00Z", "2026-11-22T04:30:00Z"]);
  });

  it("counts the change lines a hover leaves out", () => {
    const changes = Object.fromEntries(Array.from({ length: 10 }, (_, k) => [`net.k${String(k)}`, ["1", "2"]]));
    const hover = tuningHover({ t: "2026-11-22T00:00:00Z", agent: TIMELINE.source, changes });
    expect(hover.split("<br>")).toHaveLength(10);
    expect(hover).toContain("+2 more");
  });
});
