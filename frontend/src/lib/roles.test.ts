import { describe, expect, it } from "vitest";

import { atLeast } from "./roles";

describe("atLeast", () => {
  it("orders viewer < operator < admin", () => {
    expect(atLeast("admin", "operator")).toBe(true);
    expect(atLeast("admin", "admin")).toBe(true);
    expect(atLeast("operator", "operator")).toBe(true);
    expect(atLeast("operator", "admin")).toBe(false);
    expect(atLeast("viewer", "operator")).toBe(false);
    expect(atLeast("viewer", "viewer")).toBe(true);
  });

  it("grants nothing without a known role", () => {
    expect(atLeast(null, "viewer")).toBe(false);
    expect(atLeast(undefined, "viewer")).toBe(false);
    expect(atLeast("root" as never, "viewer")).toBe(false);
  });
});
