import { fireEvent, screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { TargetList, TargetPath } from "../../api/targetQueries";
import { mockApi } from "../../test/mockApi";
import { renderWithProviders, sessionRoutes } from "../../test/render";
import { TargetsTable } from "./TargetsTable";

const ATHENS = { id: "11111111-1111-4111-8111-111111111111", name: "athens" };
const RUN_STATUS = [
  { value: "ok", label: "OK", color: "#1a7f37" },
  { value: "failed", label: "Failed", color: "#cf222e" },
];

function target(name: string, overrides: Partial<TargetPath> = {}): TargetPath {
  return {
    source: ATHENS, target: name, test_types: ["ping", "trace"], last_run_at: "2026-11-22T11:58:00Z",
    last_status: "ok", last_run_test_type: "ping", data_age_s: 120, rtt_median_ms: 8.1, loss_fraction: 0.02,
    sent_last_hour: 600, ...overrides,
  };  // prettier-ignore
}

function renderTable(list: TargetList | number, meshes: unknown = []) {
  mockApi({ ...sessionRoutes("viewer", { run_status: RUN_STATUS }), "/api/v1/targets/": list, "/api/v1/meshes/": meshes });
  renderWithProviders(<TargetsTable />, "/paths");
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe("TargetsTable", () => {
  it("lists each agent -> target path with its figures, mesh and link", async () => {
    renderTable(
      {
        generated_at: "2026-11-22T12:00:00Z",
        targets: [
          target("example.org"),
          target("dark.example", { last_status: "failed", rtt_median_ms: null, loss_fraction: null, sent_last_hour: 0,
            test_types: ["trace"], last_run_test_type: "trace", last_run_at: "2026-11-22T09:00:00Z" }),
        ],
      },
      [{ name: "dns-watch", kind: "list", targets: ["Example.ORG"] }],
    );
    const table = await screen.findByTestId("targets-table");
    const rows = within(table).getAllByRole<HTMLTableRowElement>("row").slice(1);
    const link = within(rows[0] as HTMLElement).getByRole("link", { name: "athens → example.org" });
    expect(link.getAttribute("href")).toBe(`/targets/${ATHENS.id}/example.org`);
    expect(await within(rows[0] as HTMLElement).findByText("dns-watch")).toBeDefined();
    expect(rows[0]?.cells[1]?.textContent).toBe("ping, trace");
    expect(rows[0]?.cells[2]?.textContent).toBe("8.10 ms");
    expect(rows[0]?.cells[3]?.textContent).toBe("2.00 %");
    expect(rows[0]?.cells[5]?.textContent).toBe("2 min ago");
    expect(rows[1]?.cells[3]?.textContent).toBe("no pings");
    expect(within(rows[1] as HTMLElement).getByText("Failed")).toBeDefined();
    expect(rows[1]?.cells[5]?.textContent).toBe("3 h ago");

    fireEvent.change(screen.getByRole("searchbox"), { target: { value: "dark" } });
    expect(within(screen.getByTestId("targets-table")).getAllByRole("row").length).toBe(2);
    fireEvent.change(screen.getByRole("searchbox"), { target: { value: "nowhere" } });
    expect(screen.getByTestId("targets-no-match").textContent).toContain("nowhere");
  });

  it("says how to get targets when there are none", async () => {
    renderTable({ generated_at: "2026-11-22T12:00:00Z", targets: [] });
    expect((await screen.findByTestId("targets-empty")).textContent).toContain("list mesh");
  });

  it("says when the list cannot be read", async () => {
    renderTable(500);
    expect((await screen.findByRole("alert")).textContent).toContain("Could not load the external targets");
  });
});
