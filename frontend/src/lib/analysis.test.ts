import { describe, expect, it } from "vitest";

import type { Choices } from "../api/queries";
import { SLOW_MEMBER_RUN, run } from "../test/analysisFixtures";

import {
  BYTES_PER_TIB,
  TERM_NAMES,
  TERM_TITLES,
  findingSentence,
  formatFraction,
  formatMagnitude,
  memberScaleNote,
  memberSentence,
  metricTitle,
  parseGoalGbps,
  parseVolumeTib,
  termTitle,
} from "./analysis";

describe("terms", () => {
  it("lists every term of the contract once, in table order", () => {
    expect([...TERM_NAMES].sort()).toEqual(Object.keys(TERM_TITLES).sort());
  });

  it("names terms, and passes through what it does not know", () => {
    expect(termTitle("receive_window")).toBe("Receive window");
    expect(termTitle("unknown")).toBe("unknown");
    expect(termTitle("warp_drive")).toBe("warp_drive");
  });
});

describe("formatting", () => {
  it("shows a window fraction, or that it is unknown", () => {
    expect(formatFraction(0.5)).toBe("0.5");
    expect(formatFraction(2 / 3)).toBe("0.667");
    expect(formatFraction(null)).toBe("unknown");
  });

  it.each([
    [-0.42, "relative", "-42 %"],
    [0.1, "relative", "+10 %"],
    [3.2, "ms", "+3.20 ms"],
    [1.5, "pp", "+1.50 pp"],
    [1, "paths", "1 new path"],
    [2, "paths", "2 new paths"],
    [4, "furlongs", "4 furlongs"],
    [1, "members", "+1 member"],
    [-1, "members", "-1 member"],
    [2, "members", "+2 members"],
  ])("formatMagnitude(%s, %s) -> %s", (magnitude, unit, expected) => {
    expect(formatMagnitude(magnitude, unit)).toBe(expected);
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

describe("ECMP members", () => {
  it("says which member a run took and its share of that member's ceiling", () => {
    expect(memberSentence(SLOW_MEMBER_RUN)).toBe("on ECMP member 2 (31 ms): 94% of that member's ceiling");
    expect(memberScaleNote(SLOW_MEMBER_RUN)).toBe(
      "Member 2's ceiling is 75% of the fastest member's: the regression rules judge the run against its own " +
        "member, not as a drop.",
    );
  });

  it("says nothing of members on a single path, and no scale note on the fastest member", () => {
    const single = run({ run_id: "r1", started_at: "2026-11-22T00:00:00Z" });
    expect(memberSentence(single)).toBeNull();
    expect(memberScaleNote(single)).toBeNull();
    const fast = run({
      run_id: "r2",
      started_at: "2026-11-22T00:00:00Z",
      fraction_of_ceiling: null,
      ceilings: {
        ...SLOW_MEMBER_RUN.ceilings,
        member: { index: 1, count: 2, rtt_ms: 23.04, ceiling_bps: 1e9, scale: 1 },
      },
    });
    expect(memberSentence(fast)).toBe("on ECMP member 1 (23 ms)");
    expect(memberScaleNote(fast)).toBeNull();
  });

  it("names finding metrics, and passes through what it does not know", () => {
    const choices = { finding_metric: [{ value: "ecmp", label: "ECMP members", color: "#57606a" }] } as unknown as Choices;
    expect(metricTitle("ecmp", choices)).toBe("ECMP members");
    expect(metricTitle("ecmp", undefined)).toBe("ecmp");
    expect(metricTitle("jitter", choices)).toBe("jitter");
  });
});

describe("findingSentence", () => {
  it("says what a policer-rate drop rests on", () => {
    expect(findingSentence("policer_ramp", { baseline_ramp_rate_bps: 50.2e6, tcp_rate_bps: 24e6 }, 37.1e6)).toBe(
      "A paced UDP ramp measured the policer at 37.1 Mbit/s, 26% below the 50.2 Mbit/s of the path's earlier ramps, " +
        "beside a TCP run at 24 Mbit/s",
    );
  });
  it("says what changed on the ECMP members, from the evidence", () => {
    expect(findingSentence("ecmp_member_moved", { member: 2, member_rtt_ms: 31.0 }, 33.04)).toBe(
      "Member 2 moved from 31 ms to 33 ms",
    );
    expect(findingSentence("ecmp_member_appeared", { new_member_rtt_ms: 15.02 }, 3)).toBe(
      "A new member at 15 ms",
    );
    expect(
      findingSentence("ecmp_member_vanished", { member: 2, member_rtt_ms: 31, absent_sweeps: 6 }, 1),
    ).toBe("Member 2 (31 ms) missing from 6 sweeps in a row, beyond chance");
    expect(
      findingSentence(
        "ecmp_weights_shifted",
        { member: 1, member_rtt_ms: 23, share_before: 0.75, share_now: 0.5 },
        50,
      ),
    ).toBe("Member 1 (23 ms) carries 50% of the flows, was 75%");
  });

  it("is null for other rules and for evidence that lacks what it needs", () => {
    expect(findingSentence("policer_ramp", { baseline_ramp_rate_bps: 0, tcp_rate_bps: 24e6 }, 37.1e6)).toBeNull();
    expect(findingSentence("rtt_cusum", { member: 2, member_rtt_ms: 31 }, 33)).toBeNull();
    expect(findingSentence("ecmp_member_moved", { member: "2", member_rtt_ms: 31 }, 33)).toBeNull();
    expect(findingSentence("ecmp_weights_shifted", { member: 1, member_rtt_ms: Number.NaN }, 1)).toBeNull();
  });
});
