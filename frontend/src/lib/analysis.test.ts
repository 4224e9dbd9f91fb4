import { describe, expect, it } from "vitest";

import {
  BYTES_PER_TIB,
  formatMagnitude,
  formatRate,
  formatTerm,
  parseCeilingSet,
  parseGoalGbps,
  parseRunCeilings,
  parseRunEvidence,
  parseTimeModes,
  parseVolumeTib,
  termTitle,
} from "./analysis";

const CEILING_SET = {
  rtt_ms: 7.9,
  rtt_source: "the path's minimum RTT (ping, flow sweep)",
  limit: "receive_window",
  ceiling_bps: 3.2e9,
  terms: {
    link: { rate_bps: 9.49e9, reason: "" },
    receive_window: { rate_bps: 3.2e9, reason: "" },
    send_buffer: { rate_bps: 4.1e9, reason: "" },
    loss: { rate_bps: null, reason: "no loss measured: the loss ceiling has no finite bound" },
  },
};

describe("parseCeilingSet", () => {
  it("reads a complete set", () => {
    const set = parseCeilingSet(CEILING_SET);
    expect(set).toMatchObject({ rttMs: 7.9, limit: "receive_window", ceilingBps: 3.2e9 });
    expect(set?.terms.loss).toEqual({
      rateBps: null,
      reason: "no loss measured: the loss ceiling has no finite bound",
    });
  });

  it("turns missing terms and keys into unknowns instead of failing", () => {
    const set = parseCeilingSet({ limit: "warp_drive", terms: { link: { rate_bps: "fast" } } });
    expect(set).toEqual({
      rttMs: null,
      rttSource: "",
      limit: "unknown",
      ceilingBps: null,
      terms: {
        link: { rateBps: null, reason: "" },
        receive_window: { rateBps: null, reason: "not reported" },
        send_buffer: { rateBps: null, reason: "not reported" },
        loss: { rateBps: null, reason: "not reported" },
      },
    });
  });

  it.each([null, undefined, "x", 3, []])("is null for %j", (value) => {
    expect(parseCeilingSet(value)).toBeNull();
  });
});

describe("parseRunCeilings", () => {
  it("reads buffers, the set at min RTT, under load and per mode", () => {
    const ceilings = parseRunCeilings({
      buffers: { receive_bytes: 6291456, receive_source: "net.ipv4.tcp_rmem max (autotuning)", send_fraction: 0.5 },
      at_min_rtt: CEILING_SET,
      under_load: null,
      per_mode: [CEILING_SET, "garbage", { ...CEILING_SET, rtt_ms: 12.1 }],
    });
    expect(ceilings?.buffers.receiveBytes).toBe(6291456);
    expect(ceilings?.buffers.receiveFraction).toBeNull();
    expect(ceilings?.buffers.sendSource).toBe("");
    expect(ceilings?.underLoad).toBeNull();
    expect(ceilings?.perMode.map((set) => set.rttMs)).toEqual([7.9, 12.1]);
  });

  it("is null without a set at the minimum RTT", () => {
    expect(parseRunCeilings(null)).toBeNull();
    expect(parseRunCeilings({ buffers: {} })).toBeNull();
  });

  it("tolerates a missing per_mode and buffers", () => {
    const ceilings = parseRunCeilings({ at_min_rtt: {} });
    expect(ceilings?.perMode).toEqual([]);
    expect(ceilings?.buffers.sendBytes).toBeNull();
    expect(ceilings?.atMinRtt.limit).toBe("unknown");
  });
});

describe("parseRunEvidence and parseTimeModes", () => {
  it("reads evidence, dropping non-sentences", () => {
    expect(
      parseRunEvidence({
        label: "receive_window",
        winning_term: "receive_window",
        evidence: ["rate 3.1 Gbit/s", 7, "ceiling 3.2 Gbit/s"],
        not_converged: true,
      }),
    ).toMatchObject({ label: "receive_window", sentences: ["rate 3.1 Gbit/s", "ceiling 3.2 Gbit/s"], notConverged: true });
  });

  it("has empty evidence for anything else", () => {
    expect(parseRunEvidence(null)).toEqual({
      label: null,
      rateBps: null,
      ceilingBps: null,
      winningTerm: "unknown",
      fractionOfCeiling: null,
      sentences: [],
      notConverged: false,
    });
  });

  it("reads time modes and treats an unknown kind as none", () => {
    expect(
      parseTimeModes({
        kind: "route_change",
        levels_ms: [7.9, "x", 12.1],
        change_times: ["2026-11-22T10:00:00Z"],
        reason: "two levels",
      }),
    ).toEqual({ kind: "route_change", levelsMs: [7.9, 12.1], changeTimes: ["2026-11-22T10:00:00Z"], reason: "two levels" });
    expect(parseTimeModes({ kind: "aliens" }).kind).toBe("none");
    expect(parseTimeModes(undefined)).toEqual({ kind: "none", levelsMs: [], changeTimes: [], reason: "" });
  });
});

describe("formatting", () => {
  it.each([
    [3.2e9, "3.2 Gbit/s"],
    [9.49e9, "9.5 Gbit/s"],
    [940e6, "940 Mbit/s"],
    [12.5e3, "12.5 kbit/s"],
    [1.2e12, "1.2 Tbit/s"],
    [500, "500 bit/s"],
    [null, "–"],
    [Number.NaN, "–"],
  ])("formatRate(%s) -> %s", (bps, expected) => {
    expect(formatRate(bps)).toBe(expected);
  });

  it("says why a term is unknown", () => {
    expect(formatTerm({ rateBps: 3.2e9, reason: "" })).toBe("3.2 Gbit/s");
    expect(formatTerm({ rateBps: null, reason: "MTU unknown" })).toBe("unknown — MTU unknown");
    expect(formatTerm({ rateBps: null, reason: "" })).toBe("unknown");
  });

  it.each([
    [-0.42, "relative", "-42 %"],
    [0.1, "relative", "+10 %"],
    [3.2, "ms", "+3.20 ms"],
    [1.5, "pp", "+1.50 pp"],
    [1, "paths", "1 new path"],
    [2, "paths", "2 new paths"],
    [4, "furlongs", "4 furlongs"],
  ])("formatMagnitude(%s, %s) -> %s", (magnitude, unit, expected) => {
    expect(formatMagnitude(magnitude, unit)).toBe(expected);
  });

  it("names terms", () => {
    expect(termTitle("receive_window")).toBe("Receive window");
    expect(termTitle("unknown")).toBe("unknown");
  });
});

describe("goal and volume inputs", () => {
  it("turns Gbit/s into bit/s, blank into the server default", () => {
    expect(parseGoalGbps(" 10 ")).toEqual({ ok: true, value: 1e10 });
    expect(parseGoalGbps("")).toEqual({ ok: true, value: null });
    expect(parseGoalGbps("0").ok).toBe(false);
    expect(parseGoalGbps("abc").ok).toBe(false);
    expect(parseGoalGbps("20000").ok).toBe(false);
  });

  it("turns TiB into bytes", () => {
    expect(parseVolumeTib("13")).toEqual({ ok: true, value: 13 * BYTES_PER_TIB });
    expect(parseVolumeTib("")).toEqual({ ok: true, value: null });
    expect(parseVolumeTib("-1").ok).toBe(false);
  });
});
