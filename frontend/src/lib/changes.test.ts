import { describe, expect, it } from "vitest";

import { asChanges, changeRows, changeSummary, formatChangeValue } from "./changes";

describe("formatChangeValue", () => {
  it("writes each kind of value readably", () => {
    expect(formatChangeValue(null)).toBe("–");
    expect(formatChangeValue(undefined)).toBe("–");
    expect(formatChangeValue("athens")).toBe("athens");
    expect(formatChangeValue("")).toBe('""');
    expect(formatChangeValue(300)).toBe("300");
    expect(formatChangeValue(false)).toBe("false");
    expect(formatChangeValue(["a", "b"])).toBe('["a","b"]');
    expect(formatChangeValue({ duration_s: 20 })).toBe('{"duration_s":20}');
  });

  it("cuts long values with an ellipsis", () => {
    expect(formatChangeValue("abcdefghij", 5)).toBe("abcd…");
    expect(formatChangeValue("abcde", 5)).toBe("abcde");
  });
});

describe("changeRows", () => {
  it("sorts fields naturally and classifies each change", () => {
    const rows = changeRows({
      "tests.10.name": ["x", "y"],
      "tests.2.name": [null, "ping"],
      description: ["old", null],
    });
    expect(rows.map((row) => [row.field, row.kind])).toEqual([
      ["description", "removed"],
      ["tests.2.name", "added"],
      ["tests.10.name", "changed"],
    ]);
  });
});

describe("changeSummary", () => {
  it("lists the first fields and counts the rest", () => {
    expect(changeSummary({ enabled: [true, false] })).toBe("enabled: true → false");
    expect(changeSummary({ a: [1, 2], b: [3, 4], c: [5, 6], d: [7, 8] }, 2)).toBe("a: 1 → 2; b: 3 → 4; +2 more");
    expect(changeSummary({})).toBe("");
  });
});

describe("asChanges", () => {
  it("keeps only [old, new] pairs", () => {
    expect(asChanges({ name: ["a", "b"], odd: "x", triple: [1, 2, 3] })).toEqual({ name: ["a", "b"] });
    expect(asChanges(null)).toEqual({});
    expect(asChanges([["a", "b"]])).toEqual({});
  });
});
