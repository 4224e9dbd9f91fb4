import { describe, expect, it } from "vitest";

import { auditFiltersFrom, auditParams, auditQueryOf, beforeIdFrom, hasAuditFilters, NO_AUDIT_FILTERS } from "./audit";

describe("audit filters in the URL", () => {
  it("round-trips filters and the page", () => {
    const params = new URLSearchParams("object_type=mesh&actor=alice&since=2025-03-01T09:30&before_id=120&junk=1");
    const filters = auditFiltersFrom(params);
    expect(filters).toEqual({ ...NO_AUDIT_FILTERS, object_type: "mesh", actor: "alice", since: "2025-03-01T09:30" });
    expect(hasAuditFilters(filters)).toBe(true);
    expect(beforeIdFrom(params)).toBe(120);
    expect(auditParams(filters, 120).toString()).toBe("object_type=mesh&actor=alice&since=2025-03-01T09%3A30&before_id=120");
    expect(auditParams(NO_AUDIT_FILTERS, null).toString()).toBe("");
    expect(hasAuditFilters(NO_AUDIT_FILTERS)).toBe(false);
  });

  it("ignores an unreadable page", () => {
    expect(beforeIdFrom(new URLSearchParams("before_id=abc"))).toBeNull();
    expect(beforeIdFrom(new URLSearchParams("before_id=-3"))).toBeNull();
  });
});

describe("auditQueryOf", () => {
  it("asks for a page, with times as UTC", () => {
    expect(auditQueryOf({ ...NO_AUDIT_FILTERS, action: "revert", until: "2025-03-02T00:00" }, 77)).toEqual({
      limit: 50,
      action: "revert",
      until: "2025-03-02T00:00:00Z",
      before_id: 77,
    });
    expect(auditQueryOf(NO_AUDIT_FILTERS, null)).toEqual({ limit: 50 });
  });
});
