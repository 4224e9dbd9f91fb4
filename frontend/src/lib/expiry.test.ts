import { describe, expect, it } from "vitest";

import { apiTokenExpiresAt } from "./expiry";

const NOW = new Date("2025-03-01T12:00:00Z");

describe("apiTokenExpiresAt", () => {
  it("adds the chosen span to now", () => {
    expect(apiTokenExpiresAt("30d", "", NOW)).toBe("2025-03-31T12:00:00.000Z");
    expect(apiTokenExpiresAt("1y", "", NOW)).toBe("2026-03-01T12:00:00.000Z");
  });

  it("is null for the longest the site allows (the server sets it)", () => {
    expect(apiTokenExpiresAt("longest", "", NOW)).toBeNull();
  });

  it("takes a date as its start in UTC, even a past one", () => {
    expect(apiTokenExpiresAt("date", "2025-06-30", NOW)).toBe("2025-06-30T00:00:00.000Z");
    expect(apiTokenExpiresAt("date", "2020-01-01", NOW)).toBe("2020-01-01T00:00:00.000Z");
  });

  it("is undefined for a missing or unreadable date", () => {
    expect(apiTokenExpiresAt("date", "", NOW)).toBeUndefined();
    expect(apiTokenExpiresAt("date", "2025-13-45", NOW)).toBeUndefined();
  });
});
