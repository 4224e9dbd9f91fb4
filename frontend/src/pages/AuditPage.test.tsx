import { fireEvent, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { AuditEntry } from "../api/agentQueries";
import { mockApi, requestedUrls, type MockRequest } from "../test/mockApi";
import { meAs, renderWithProviders, sessionRoutes } from "../test/render";
import { AuditPage } from "./AuditPage";

function entry(id: number, fields: Partial<AuditEntry> = {}): AuditEntry {
  return {
    id,
    at: "2025-03-01T09:30:00Z",
    actor_name: "otto",
    via: "session",
    action: "update",
    object_type: "mesh",
    object_key: "backbone",
    object_repr: "backbone",
    before: { enabled: true },
    after: { enabled: false },
    changes: { enabled: [true, false], "tests.0.interval_s": [300, 600] },
    ...fields,
  };
}

const CHOICES = {
  audit_action: [{ value: "update", label: "Changed", color: "#0969da" }],
  audit_object: [
    { value: "mesh", label: "Mesh", color: "#000" },
    { value: "agent", label: "Agent", color: "#000" },
  ],
};

describe("AuditPage", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("lists changes with a compact diff and expands one to the full diff", async () => {
    mockApi({ ...sessionRoutes("admin", CHOICES), "/api/v1/audit/": [entry(5, { via: "token fpt_ab12cd34" })] });
    renderWithProviders(<AuditPage />, "/audit", meAs("admin"));
    const row = (await screen.findByText("via token fpt_ab12cd34")).closest("tr");
    if (row === null) {
      throw new Error("no row for the entry");
    }
    expect(within(row).getByText("Changed")).toBeDefined();
    expect(within(row).getByText("enabled")).toBeDefined();
    expect(within(row).getByText("600")).toBeDefined();
    expect(document.querySelector("table.change-diff")).toBeNull();
    fireEvent.click(within(row).getByRole("button", { name: "Full diff of change #5" }));
    const full = document.querySelector("table.change-diff");
    if (!(full instanceof HTMLTableElement)) {
      throw new Error("no full diff");
    }
    expect(within(full).getByText("tests.0.interval_s")).toBeDefined();
    expect(within(full).getByText("300").tagName).toBe("DEL");
    expect(screen.getByText("Whole object before and after")).toBeDefined();
  });

  it("keeps filters in the URL and pages to older entries with before_id", async () => {
    const page = Array.from({ length: 50 }, (_, index) => entry(200 - index));
    const fetchMock = mockApi({
      ...sessionRoutes("admin", CHOICES),
      "/api/v1/audit/": ({ url }: MockRequest) => (url.searchParams.has("before_id") ? [entry(3)] : page),
    });
    renderWithProviders(<AuditPage />, "/audit?object_type=mesh&actor=otto", meAs("admin"));
    const older = await screen.findByRole("link", { name: "Older →" });
    expect(older.getAttribute("href")).toBe("/audit?object_type=mesh&actor=otto&before_id=151");
    const [first] = requestedUrls(fetchMock, "/api/v1/audit/");
    expect(first?.searchParams.get("object_type")).toBe("mesh");
    expect(first?.searchParams.get("actor")).toBe("otto");
    expect(first?.searchParams.get("limit")).toBe("50");

    fireEvent.change(screen.getByLabelText("Name contains"), { target: { value: "athens" } });
    fireEvent.click(screen.getByRole("button", { name: "Apply" }));
    await screen.findAllByText("backbone");
    const last = requestedUrls(fetchMock, "/api/v1/audit/").at(-1);
    expect(last?.searchParams.get("q")).toBe("athens");
    expect(last?.searchParams.get("object_type")).toBe("mesh");
  });

  it("tells a non-admin the log is not theirs, without asking for it", () => {
    const fetchMock = mockApi(sessionRoutes("operator"));
    renderWithProviders(<AuditPage />, "/audit", meAs("operator"));
    expect(screen.getByText("Only admins read the audit log.")).toBeDefined();
    expect(requestedUrls(fetchMock, "/api/v1/audit/")).toHaveLength(0);
  });
});
