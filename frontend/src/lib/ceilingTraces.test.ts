import type { PlotData } from "plotly.js";
import { describe, expect, it } from "vitest";

import type { CeilingsNow } from "../api/queries";
import {
  ANALYSIS,
  CEILINGS_NOW,
  DIAGNOSES,
  RUN_EVIDENCE,
  RW_EVIDENCE,
  SLOW_MEMBER_RUN,
  UNKNOWN_CEILINGS,
  ceilingSet,
  run,
} from "../test/analysisFixtures";
import { UNLISTED_COLOR, ceilingLayout, ceilingTraces, modeLineLabel, wrapForHover } from "./ceilingTraces";

const NOW = new Date("2026-11-22T18:00:00Z");

function traces(runs = ANALYSIS.runs, ceilingsNow: CeilingsNow | null = CEILINGS_NOW, diagnoses = DIAGNOSES) {
  return ceilingTraces(runs, ceilingsNow, diagnoses, NOW) as Partial<PlotData>[];
}

function named(all: Partial<PlotData>[], name: string): Partial<PlotData> {
  const found = all.find((trace) => trace.name === name);
  if (found === undefined) {
    throw new Error(`no trace named ${name}; have ${all.map((trace) => String(trace.name)).join(", ")}`);
  }
  return found;
}

describe("ceilingTraces", () => {
  it("draws nothing without runs: there is no time axis", () => {
    expect(traces([])).toEqual([]);
  });

  it("draws a dashed line per RTT mode from the oldest run to now", () => {
    const all = traces();
    const mode1 = named(all, "mode 1: 7.9 ms -> 3.2 Gbit/s");
    const mode2 = named(all, "mode 2: 12.1 ms -> 2.1 Gbit/s");
    expect(mode1.x).toEqual(["2026-11-22T06:00:00Z", "2026-11-22T18:00:00.000Z"]);
    expect(mode1.y).toEqual([3.19e9, 3.19e9]);
    expect(mode2.y).toEqual([2.08e9, 2.08e9]);
    expect(mode1.line?.dash).toBe("dash");
    expect(mode1.line?.color).not.toBe(mode2.line?.color);
  });

  it("falls back to one line at the minimum RTT without modes", () => {
    const ceilingsNow = { ...CEILINGS_NOW, per_mode: [] };
    const lines = traces(ANALYSIS.runs, ceilingsNow).filter((trace) => trace.legendgroup === "now");
    expect(lines.map((trace) => trace.name)).toEqual(["now: 7.9 ms -> 3.2 Gbit/s"]);
  });

  it("skips a mode whose ceiling is unknown, and every line when ceilings are unknown", () => {
    const ceilingsNow = {
      ...CEILINGS_NOW,
      per_mode: [ceilingSet(7.9, 3.19e9), { ...ceilingSet(12.1, null), ceiling_bps: null }],
    };
    const modeNames = traces(ANALYSIS.runs, ceilingsNow)
      .filter((trace) => trace.legendgroup === "now")
      .map((trace) => trace.name);
    expect(modeNames).toEqual(["mode 1: 7.9 ms -> 3.2 Gbit/s"]);
    const unknown = { ...CEILINGS_NOW, ...UNKNOWN_CEILINGS };
    expect(traces(ANALYSIS.runs, unknown).filter((trace) => trace.legendgroup === "now")).toEqual([]);
    expect(traces(ANALYSIS.runs, null).filter((trace) => trace.legendgroup === "now")).toEqual([]);
  });

  it("steps each run's ceiling at its minimum RTT, oldest first", () => {
    const ceiling = named(traces(), "ceiling of each run");
    expect(ceiling.x).toEqual(["2026-11-22T06:00:00Z", "2026-11-22T12:00:00Z"]);
    expect(ceiling.y).toEqual([9.49e9, 3.19e9]);
    expect(ceiling.line?.shape).toBe("hv");
  });

  it("leaves a gap where a run's ceiling is unknown, and no line when all are", () => {
    const runs = [
      run({ run_id: "a", started_at: "2026-11-22T00:00:00Z", ceilings: UNKNOWN_CEILINGS, ceiling_bps: null }),
      run({ run_id: "b", started_at: "2026-11-22T06:00:00Z", ceilings: UNKNOWN_CEILINGS, ceiling_bps: 2e9 }),
      run({ run_id: "c", started_at: "2026-11-22T12:00:00Z" }),
    ];
    const ceiling = named(traces(runs), "ceiling of each run");
    expect(ceiling.y).toEqual([null, 2e9, 3.19e9]);
    // Without a term at the minimum RTT the hover falls back to the run's own ceiling.
    expect((ceiling.text as string[])[1]).toBe("ceiling 2 Gbit/s<br>smallest term at unknown RTT");
    const unknown = runs.map((item) => ({ ...item, ceilings: UNKNOWN_CEILINGS, ceiling_bps: null }));
    expect(traces(unknown, null).map((trace) => trace.name)).toEqual(["Receive window limited"]);
  });

  it("colours rates by the server's diagnosis colours and lists diagnoses in its order", () => {
    const all = traces();
    const rates = all.filter((trace) => trace.mode === "markers");
    expect(rates.map((trace) => trace.name)).toEqual(["Receive window limited", "Capacity limited"]);
    expect(rates[0]?.marker?.color).toBe("#bc4c00");
    expect(rates[1]?.marker?.color).toBe("#1a7f37");
    expect(rates[1]?.y).toEqual([9.1e9]);
  });

  it("hovers the diagnosis label and the first evidence lines only", () => {
    const text = named(traces(), "Receive window limited").text as string[];
    expect(text[0]).toContain("<b>Receive window limited</b>");
    expect(text[0]).toContain("3.1 Gbit/s of 3.2 Gbit/s (97.0 %), 1 stream");
    expect(text[0]).toContain("receive-window ceiling");
    expect(text[0]).not.toContain(RW_EVIDENCE[2]);
  });

  it("hovers the ECMP member a run took, its share of that member's ceiling", () => {
    const text = named(traces([SLOW_MEMBER_RUN]), "Receive window limited").text as string[];
    expect(text[0]).toContain("on ECMP member 2 (31 ms): 94% of that member's ceiling");
  });

  it("shows an unlisted diagnosis by its value in a neutral colour, and skips runs without a rate", () => {
    const runs = [
      run({
        run_id: "a",
        started_at: "2026-11-22T00:00:00Z",
        // A diagnosis a newer backend may send that this UI's types do not list yet.
        diagnosis: "cosmic_rays" as unknown as "unknown",
        evidence: { ...RUN_EVIDENCE, evidence: [] },
      }),
      run({ run_id: "b", started_at: "2026-11-22T06:00:00Z", rate_bps: null }),
    ];
    const rates = traces(runs, null, []).filter((trace) => trace.mode === "markers");
    expect(rates).toHaveLength(1);
    expect(rates[0]).toMatchObject({ name: "cosmic_rays", marker: { color: UNLISTED_COLOR } });
    expect(rates[0]?.x).toEqual(["2026-11-22T00:00:00Z"]);
  });

  it("draws no line before runs older than now", () => {
    const future = [run({ run_id: "a", started_at: "2026-11-23T00:00:00Z" })];
    const line = traces(future).find((trace) => trace.legendgroup === "now");
    expect(line?.x).toEqual(["2026-11-23T00:00:00Z", "2026-11-23T00:00:00.000Z"]);
  });
});

describe("labels and hovers", () => {
  it("labels a mode by RTT and ceiling", () => {
    const set = ceilingSet(7.9, 3.19e9);
    expect(modeLineLabel(0, set)).toBe("mode 1: 7.9 ms -> 3.2 Gbit/s");
    expect(modeLineLabel(1, { ...set, rtt_ms: null, ceiling_bps: null })).toBe("mode 2: unknown RTT -> –");
  });

  it("wraps long sentences and escapes markup", () => {
    expect(wrapForHover("a b c d", 3)).toBe("a b<br>c d");
    expect(wrapForHover("rate < ceiling & more")).toBe("rate &lt; ceiling &amp; more");
  });

  it("puts rates on an SI axis from zero", () => {
    expect(ceilingLayout().yaxis).toMatchObject({ tickformat: "~s", ticksuffix: "bit/s", rangemode: "tozero" });
  });
});
