import { describe, expect, it } from "vitest";

import {
  BYTES_PER_TIB,
  TERM_NAMES,
  TERM_TITLES,
  formatFraction,
  formatMagnitude,
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
