import { describe, expect, it } from "vitest";

import { DEFAULT_RANGE_KEY, TIME_RANGES, rangeFromKey } from "./timeRange";

describe("rangeFromKey", () => {
  it("finds every listed range", () => {
    for (const range of TIME_RANGES) {
      expect(rangeFromKey(range.key)).toBe(range);
    }
  });

  it.each([null, "", "2y", "24H"])("falls back to the default for %j", (key) => {
    expect(rangeFromKey(key).key).toBe(DEFAULT_RANGE_KEY);
  });
});
