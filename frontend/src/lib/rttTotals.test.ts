import { describe, expect, it } from "vitest";

import { rttTotals } from "./rttTotals";

describe("rttTotals", () => {
  it("takes the lowest minimum, the newest median and the loss over every point", () => {
    const totals = rttTotals([
      { min: 12, p50: 14, sent: 10, lost: 1 },
      { min: null, p50: null, sent: 10, lost: 10 },
      { min: 11.5, p50: 13, sent: 20, lost: 1 },
    ]);
    expect(totals).toEqual({ minRttMs: 11.5, latestMedianMs: 13, lossFraction: 12 / 40, sent: 40, lost: 12 });
  });

  it("has no figures without points", () => {
    expect(rttTotals([])).toEqual({ minRttMs: null, latestMedianMs: null, lossFraction: null, sent: 0, lost: 0 });
  });
});
