import { describe, expect, it } from "vitest";

import { explicitRangeParams, namedRangeParams, rangeFromParams } from "./historyRange";

const NOW = new Date("2026-11-27T12:00:00Z");

function range(query: string) {
  return rangeFromParams(new URLSearchParams(query), NOW);
}

describe("rangeFromParams", () => {
  it("reads a named range back from now, the last 24 hours by default", () => {
    expect(range("").key).toBe("24h");
    expect(range("").from.toISOString()).toBe("2026-11-26T12:00:00.000Z");
    const year = range("range=1y");
    expect(year.from.toISOString()).toBe("2025-11-27T12:00:00.000Z");
    expect(year.backS).toBe(365 * 86_400);
  });

  it("reads explicit bounds (a zoom, a finding's link) and cuts them at now", () => {
    const zoom = range("range=7d&from=2026-11-25T00:00:00Z&to=2026-11-28T00:00:00Z");
    expect(zoom.key).toBeNull();
    expect(zoom.to.toISOString()).toBe(NOW.toISOString());
    expect(zoom.label).toBe("2026-11-25 00:00 – 2026-11-27 12:00 UTC");
    expect(zoom.problem).toBeNull();
    expect(range("from=2026-11-27T11:00:00Z").to).toEqual(NOW);
    // Reaching now, it is read up to the server's now; ending before, exactly as given.
    expect(zoom.live).toBe(true);
    expect(range("from=2026-11-25T00:00:00Z&to=2026-11-26T00:00:00Z").live).toBe(false);
    expect(range("range=7d").live).toBe(true);
  });

  it("falls back with a reason for a broken, reversed, empty or future range", () => {
    expect(range("range=2w").problem).toContain("not a range");
    expect(range("from=yesterday&to=2026-11-27T00:00:00Z").problem).toContain("not a valid time");
    const reversed = range("range=7d&from=2026-11-27T00:00:00Z&to=2026-11-26T00:00:00Z");
    expect(reversed.problem).toContain("ends before it starts");
    expect(reversed.key).toBe("7d");
    expect(range("from=2026-11-27T00:00:00Z&to=2026-11-27T00:00:00Z").problem).toContain("ends before it starts");
    expect(range("from=2027-01-01T00:00:00Z&to=2027-02-01T00:00:00Z").problem).toContain("future");
  });
});

describe("range URLs", () => {
  it("drops explicit bounds for a named range and keeps other parameters", () => {
    const params = new URLSearchParams("from=a&to=b&goal=1");
    expect(namedRangeParams(params, "30d").toString()).toBe("goal=1&range=30d");
    const explicit = explicitRangeParams(new URLSearchParams("range=1h"), NOW, new Date("2026-11-27T13:00:00Z"));
    expect(explicit.get("from")).toBe(NOW.toISOString());
    expect(explicit.get("range")).toBe("1h");
  });
});
