import { describe, expect, it } from "vitest";

import { sparkDomain, sparkPaths } from "./sparkline";

const BOX = { width: 23, height: 13, zeroBased: false };

describe("sparkDomain", () => {
  it("spans every series' values, from 0 when zero-based", () => {
    const series = [
      { values: [5, null, 7], className: "a" },
      { values: [9], className: "b" },
    ];
    expect(sparkDomain(series, false)).toEqual([5, 9]);
    expect(sparkDomain(series, true)).toEqual([0, 9]);
  });

  it("is null with no value at all", () => {
    expect(sparkDomain([{ values: [null, null], className: "a" }], false)).toBeNull();
    expect(sparkDomain([{ values: [Number.NaN], className: "a" }], true)).toBeNull();
    expect(sparkDomain([], false)).toBeNull();
  });
});

describe("sparkPaths", () => {
  it("draws the lowest value at the bottom and the highest at the top, evenly spaced", () => {
    // Inner box 20 x 10 from (1.5, 1.5).
    const [path] = sparkPaths([{ values: [0, 10, 5], className: "rtt" }], BOX);
    expect(path).toEqual({ d: "M1.5 11.5 L11.5 1.5 L21.5 6.5", className: "rtt" });
  });

  it("breaks the line at gaps and draws a lone point as a dot", () => {
    const [path] = sparkPaths([{ values: [0, null, 10, 10, null, 5], className: "rtt" }], BOX);
    expect(path?.d).toBe("M1.5 11.5 h0 M9.5 1.5 L13.5 1.5 M21.5 6.5 h0");
  });

  it("puts a flat series mid-height and a single point in the middle", () => {
    expect(sparkPaths([{ values: [4, 4], className: "a" }], BOX)[0]?.d).toBe("M1.5 6.5 L21.5 6.5");
    expect(sparkPaths([{ values: [4], className: "a" }], BOX)[0]?.d).toBe("M11.5 6.5 h0");
  });

  it("shares one scale across series (a rate under its ceiling)", () => {
    const paths = sparkPaths(
      [
        { values: [5, 10], className: "rate" },
        { values: [10, 10], className: "ceiling" },
      ],
      { ...BOX, zeroBased: true },
    );
    expect(paths.map((path) => path.d)).toEqual(["M1.5 6.5 L21.5 1.5", "M1.5 1.5 L21.5 1.5"]);
  });

  it("draws nothing when there is nothing to draw", () => {
    expect(sparkPaths([{ values: [null], className: "a" }], BOX)).toEqual([]);
  });
});
