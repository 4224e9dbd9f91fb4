import { describe, expect, it } from "vitest";

import { FINDING } from "../test/analysisFixtures";
import { findingDuration, findingHref, findingWindow } from "./findingsList";

const NOW = new Date("2026-11-22T14:00:00Z");

describe("findingHref", () => {
  it("spans an open finding from an hour before its start to now, with the smallest range that reaches it", () => {
    const href = new URL(findingHref(FINDING, NOW), "http://fathom.test");
    expect(href.pathname).toBe(`/paths/${FINDING.source.id}/${FINDING.destination.id}`);
    expect(href.searchParams.get("from")).toBe("2026-11-22T05:00:00.000Z");
    expect(href.searchParams.get("to")).toBe(NOW.toISOString());
    expect(href.searchParams.get("range")).toBe("24h");
  });

  it("ends a cleared finding an hour after it cleared, never in the future", () => {
    const cleared = { ...FINDING, cleared_at: "2026-11-22T09:00:00Z" };
    expect(new URL(findingHref(cleared, NOW), "http://x").searchParams.get("to")).toBe("2026-11-22T10:00:00.000Z");
    const justNow = { ...FINDING, cleared_at: "2026-11-22T13:30:00Z" };
    expect(new URL(findingHref(justNow, NOW), "http://x").searchParams.get("to")).toBe(NOW.toISOString());
  });

  it("falls back to the longest range for a finding older than every range", () => {
    const old = { ...FINDING, started_at: "2026-01-01T00:00:00Z" };
    expect(new URL(findingHref(old, NOW), "http://x").searchParams.get("range")).toBe("30d");
  });
});

describe("findingDuration", () => {
  it("says how long it has been open, or lasted", () => {
    expect(findingDuration(FINDING, NOW)).toBe("open 8.0 h");
    expect(findingDuration({ ...FINDING, cleared_at: "2026-11-22T06:20:00Z" }, NOW)).toBe("20 min");
    expect(findingDuration({ ...FINDING, started_at: "2026-11-18T14:00:00Z" }, NOW)).toBe("open 4.0 d");
  });
});

describe("findingWindow", () => {
  it("reads the URL's window, defaulting to 7 days", () => {
    expect(findingWindow("24h").seconds).toBe(86_400);
    expect(findingWindow("all").seconds).toBeNull();
    expect(findingWindow(null).key).toBe("7d");
    expect(findingWindow("bogus").key).toBe("7d");
  });
});
