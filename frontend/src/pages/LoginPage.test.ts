import { describe, expect, it } from "vitest";

import { safeNext } from "./LoginPage";

describe("safeNext", () => {
  it.each([
    ["/paths/a/b?range=24h", "/paths/a/b?range=24h"],
    ["/agents", "/agents"],
    [null, "/paths"],
    ["https://evil.example/", "/paths"],
    ["//evil.example/", "/paths"],
    ["javascript:alert(1)", "/paths"],
  ])("%j -> %j", (next, expected) => {
    expect(safeNext(next)).toBe(expected);
  });
});
