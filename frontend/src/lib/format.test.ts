import { describe, expect, it } from "vitest";

import {
  formatAgo,
  formatBytes,
  formatDuration,
  formatLinkSpeed,
  formatMs,
  formatPercent,
  formatRate,
  formatUtc,
} from "./format";

describe("formatMs", () => {
  it.each([
    [0.0423, "0.042 ms"],
    [7.8149, "7.81 ms"],
    [11.9, "11.90 ms"],
    [312.4, "312 ms"],
    [null, "–"],
    [Number.NaN, "–"],
  ])("%s -> %s", (value, expected) => {
    expect(formatMs(value)).toBe(expected);
  });
});

describe("formatPercent", () => {
  it.each([
    [0, "0 %"],
    [0.0001, "0.010 %"],
    [0.02, "2.00 %"],
    [0.5, "50.0 %"],
    [null, "–"],
  ])("%s -> %s", (value, expected) => {
    expect(formatPercent(value)).toBe(expected);
  });
});

describe("formatBytes", () => {
  it.each([
    [212992, "208 KiB"],
    [6291456, "6 MiB"],
    [4194304, "4 MiB"],
    [3 * 1024 * 1024 + 512 * 1024, "3.50 MiB"],
    [1000, "1000 B"],
    [-1, "–"],
  ])("%s -> %s", (value, expected) => {
    expect(formatBytes(value)).toBe(expected);
  });
});

describe("formatRate", () => {
  it.each([
    [3.19e9, "3.2 Gbit/s"],
    [9.49e9, "9.5 Gbit/s"],
    [1e9, "1 Gbit/s"],
    [1e10, "10 Gbit/s"],
    [2.5e9, "2.5 Gbit/s"],
    [940e6, "940 Mbit/s"],
    [123.4e6, "123 Mbit/s"],
    [12.5e3, "12.5 kbit/s"],
    [64e3, "64 kbit/s"],
    [1.2e12, "1.2 Tbit/s"],
    [500, "500 bit/s"],
    [0, "0 bit/s"],
    [-1, "–"],
    [null, "–"],
    [undefined, "–"],
    [Number.NaN, "–"],
    [Number.POSITIVE_INFINITY, "–"],
  ])("%s -> %s", (bps, expected) => {
    expect(formatRate(bps)).toBe(expected);
  });

  it("keeps a configured rate's second decimal when asked", () => {
    expect(formatRate(1.25e9, 2)).toBe("1.25 Gbit/s");
    expect(formatRate(1.25e9)).toBe("1.3 Gbit/s");
    expect(formatRate(500e6, 2)).toBe("500 Mbit/s");
  });
});

describe("formatLinkSpeed", () => {
  it.each([
    [1000, "1 Gbit/s"],
    [25000, "25 Gbit/s"],
    [2500, "2.5 Gbit/s"],
    [100, "100 Mbit/s"],
    [400_000, "400 Gbit/s"],
    [0, "–"],
    [null, "–"],
    [-1, "–"],
  ])("%s -> %s", (value, expected) => {
    expect(formatLinkSpeed(value)).toBe(expected);
  });
});

describe("formatAgo", () => {
  const now = new Date("2026-11-22T12:00:00Z");
  it.each([
    ["2026-11-22T11:59:48Z", "12 s ago"],
    ["2026-11-22T11:55:00Z", "5 min ago"],
    ["2026-11-22T09:00:00Z", "3 h ago"],
    ["2026-11-19T12:00:00Z", "3 d ago"],
    ["2026-11-22T12:05:00Z", "in the future"],
    [null, "never"],
    ["not a date", "–"],
  ])("%s -> %s", (iso, expected) => {
    expect(formatAgo(iso, now)).toBe(expected);
  });
});

describe("formatUtc and formatDuration", () => {
  it("prints UTC to the second", () => {
    expect(formatUtc("2026-11-22T12:34:56.789Z")).toBe("2026-11-22 12:34:56 UTC");
    expect(formatUtc("garbage")).toBe("–");
  });

  it.each([
    [45, "45 s"],
    [60, "1 min"],
    [300, "5 min"],
    [3600, "1 h"],
    [86_400, "1 d"],
  ])("%s s -> %s", (seconds, expected) => {
    expect(formatDuration(seconds)).toBe(expected);
  });
});
