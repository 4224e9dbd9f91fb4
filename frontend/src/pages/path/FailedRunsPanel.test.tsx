import { screen, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { PathRun } from "../../api/perfsonar";
import { RUNS_LIMIT } from "../../api/perfsonarQueries";
import { mockApi, requestedUrls } from "../../test/mockApi";
import { renderWithProviders, sessionRoutes } from "../../test/render";
import { FailedRunsPanel, failedRunsSummary, MAX_FAILED_ROWS } from "./FailedRunsPanel";

function run(
  id: string,
  testType: PathRun["test_type"],
  startedAt: string,
  status: PathRun["status"],
  error: string,
): PathRun {
  return { id, test_type: testType, test_id: `test-${id}`, started_at: startedAt, ended_at: startedAt, status, error };
}

// Newest first, as the server answers.
const RUNS: PathRun[] = [
  run("r2", "ping", "2026-05-20T12:00:00Z", "missed", ""),
  run("r3", "throughput", "2026-05-20T11:00:00Z", "failed", "iperf3: connection refused"),
  run("r1", "throughput", "2026-05-20T10:00:00Z", "failed", "pScheduler run nonstart: Run forbidden by limits"),
];

const RUN_STATUS = [
  { value: "failed", label: "Failed", color: "#cf222e" },
  { value: "missed", label: "Missed", color: "#9a6700" },
];

function renderPanel(runs: unknown, entry = "/paths/src-id/dst-id?range=24h") {
  const fetchMock = mockApi({ ...sessionRoutes("viewer", { run_status: RUN_STATUS }), "/api/v1/paths/runs/": runs });
  renderWithProviders(<FailedRunsPanel source="src-id" destination="dst-id" />, entry);
  return fetchMock;
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe("FailedRunsPanel", () => {
  it("lists failed and missed runs newest first, with pScheduler's reason", async () => {
    const fetchMock = renderPanel(RUNS);
    const panel = screen.getByRole("region", { name: "Failed runs" });
    expect(await within(panel).findByText("pScheduler run nonstart: Run forbidden by limits")).toBeDefined();
    expect(within(panel).getByRole("status").textContent).toBe("2 failed, 1 missed.");
    const rows = within(panel).getAllByRole<HTMLTableRowElement>("row").slice(1);
    expect(rows.map((row) => row.cells[0]?.textContent)).toEqual([
      "2026-05-20 12:00:00 UTC",
      "2026-05-20 11:00:00 UTC",
      "2026-05-20 10:00:00 UTC",
    ]);
    expect(within(rows[0] as HTMLTableRowElement).getByText("no reason given")).toBeDefined();
    expect(within(rows[0] as HTMLTableRowElement).getByText("Missed").style.backgroundColor).toBe("rgb(154, 103, 0)");

    const [url] = requestedUrls(fetchMock, "/api/v1/paths/runs/");
    expect(url?.searchParams.get("source")).toBe("src-id");
    expect(url?.searchParams.get("destination")).toBe("dst-id");
    expect(url?.searchParams.get("status")).toBe("failed");
    expect(url?.searchParams.get("limit")).toBe("1000");
    // The window the page shows: 24 h back from now.
    const sinceS = (Date.now() - Date.parse(url?.searchParams.get("since") ?? "")) / 1000;
    expect(sinceS).toBeGreaterThan(24 * 3600 - 60);
    expect(sinceS).toBeLessThan(24 * 3600 + 60);
  });

  it("shows the newest runs and says when the server may have held some back", async () => {
    const many = Array.from({ length: RUNS_LIMIT }, (_, index) =>
      run(`m${String(index)}`, "ping", new Date(Date.UTC(2026, 4, 20) - index * 60_000).toISOString(), "missed", ""),
    );
    renderPanel(many);
    const panel = screen.getByRole("region", { name: "Failed runs" });
    const status = await within(panel).findByText(/there may be more/);
    expect(status.textContent).toBe(
      `${String(RUNS_LIMIT)} missed (the newest ${String(RUNS_LIMIT)}; there may be more); the newest ${String(MAX_FAILED_ROWS)} are listed.`,
    );
    expect(within(panel).getAllByRole("row")).toHaveLength(MAX_FAILED_ROWS + 1);
  });

  it("says when nothing failed in the range", async () => {
    renderPanel([], "/paths/src-id/dst-id");
    expect(await screen.findByText("No failed or missed runs in the last 1 hour.")).toBeDefined();
  });

  it("says why the runs could not be loaded", async () => {
    renderPanel(500);
    expect(await screen.findByText("Could not load the failed runs: server error.")).toBeDefined();
  });

  it("counts by status", () => {
    expect(failedRunsSummary(RUNS)).toBe("2 failed, 1 missed");
    expect(failedRunsSummary([])).toBe("");
  });
});
