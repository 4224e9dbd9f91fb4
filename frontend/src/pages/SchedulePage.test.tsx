import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, within } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { Agent, Choices, Mesh, Slot, Utilization } from "../api/queries";
import { mockApi, requestedUrls, type ApiRoutes } from "../test/mockApi";
import { SchedulePage } from "./SchedulePage";

const HOUR_MS = 3600 * 1000;

function iso(offsetMs: number): string {
  return new Date(Date.now() + offsetMs).toISOString();
}

const CHOICES: Choices = {
  agent_kind: [],
  perfsonar_task_state: [],
  tls_mode: [],
  agent_status: [],
  alert_comparison: [],
  alert_metric: [],
  change_relation: [],
  alert_rule_kind: [],
  alert_severity: [],
  alert_state: [],
  delivery_status: [],
  incident_status: [],
  token_state: [],
  token_scope: [],
  role: [],
  audit_action: [],
  audit_object: [],
  run_status: [],
  slot_state: [
    { value: "planned", label: "Planned", color: "#0969da" },
    { value: "ok", label: "OK", color: "#1a7f37" },
    { value: "failed", label: "Failed", color: "#cf222e" },
    { value: "missed", label: "Missed", color: "#9a6700" },
    { value: "unschedulable", label: "Unschedulable", color: "#8250df" },
  ],
  diagnosis: [],
  rtt_mode_verdict: [],
  finding_metric: [],
  finding_state: [],
};

const UTILIZATION: Utilization = {
  now: iso(0),
  planned_until: iso(24 * HOUR_MS),
  horizon_s: 86_400,
  agents: [
    { agent: "dcb", planned_exclusive_s: 540, utilization: 0.00625, demand: 0.05, slots_planned: 12 },
    { agent: "dca", planned_exclusive_s: 70_000, utilization: 0.81, demand: 0.92, slots_planned: 400 },
  ],
};

const MESHES: Mesh[] = [
  {
    name: "default",
    description: "Every active agent, perfSONAR's regular tests",
    kind: "mesh",
    all_agents: true,
    enabled: true,
    members: [],
    tests: [
      { name: "throughput", test_type: "throughput", spec: { duration_s: 20 }, interval_s: 21_600, slip_s: 21_600 },
      { name: "ping", test_type: "ping", spec: { count: 10 }, interval_s: 300, slip_s: 0 },
    ],
  },
];

function slot(fields: Partial<Slot> & Pick<Slot, "id" | "state" | "start_at">): Slot {
  const end = new Date(new Date(fields.start_at).getTime() + 45_000).toISOString();
  return {
    mesh: "default",
    test: "throughput",
    source_agent: "dca",
    destination_agent: "dcb",
    test_type: "throughput",
    period_start: fields.start_at,
    end_at: end,
    reason: "",
    run_id: null,
    ...fields,
  };
}

const MISSED_REASON = "iperf3 could not connect to dcb:5201 (connection refused)";

const SLOTS: Slot[] = [
  slot({ id: "1", state: "missed", start_at: iso(-3 * HOUR_MS), reason: MISSED_REASON }),
  slot({ id: "2", state: "ok", start_at: iso(-2 * HOUR_MS), source_agent: "dcb", destination_agent: "dca" }),
  slot({ id: "3", state: "planned", start_at: iso(2 * HOUR_MS) }),
];

const AGENTS: Pick<Agent, "id" | "name">[] = [
  { id: "a", name: "dca" },
  { id: "b", name: "dcb" },
];

/** Stubs fetch with the schedule page's routes; `overrides` replace or add paths. */
function mockScheduleApi(overrides: ApiRoutes = {}) {
  return mockApi({
    "/api/v1/choices/": CHOICES,
    "/api/v1/slots/utilization/": UTILIZATION,
    "/api/v1/meshes/": MESHES,
    "/api/v1/slots/": SLOTS,
    "/api/v1/agents/": AGENTS,
    ...overrides,
  });
}

function renderPage(entry = "/schedule") {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[entry]}>
        <SchedulePage />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

describe("SchedulePage", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("shows a missed slot's reason and its server-coloured state", async () => {
    mockScheduleApi();
    renderPage();
    const reason = await screen.findByText(MISSED_REASON);
    const row = reason.closest("tr");
    if (row === null) {
      throw new Error("the reason is not in a table row");
    }
    expect(row.className).toBe("slot-problem");
    const badge = within(row).getByText("Missed");
    expect(badge.getAttribute("data-status")).toBe("missed");
    expect(badge.style.backgroundColor).toBe("rgb(154, 103, 0)");
    expect(screen.getByText(/Their reason is in the last column/)).toBeDefined();
  });

  it("flags an agent over 80 % demand and says what to do", async () => {
    mockScheduleApi();
    renderPage();
    const alert = await screen.findByText(/dca is asked for more than 80 % of its time/);
    expect(alert.closest("[role=alert]")?.textContent).toContain("lengthen the throughput intervals");
    const cell = screen.getByText("92 %");
    expect(cell.closest("tr")?.className).toBe("over-demand");
    // The busiest agent comes first.
    const firstRow = screen.getAllByRole("link", { name: /^dc[ab]$/ })[0];
    expect(firstRow?.textContent).toBe("dca");
    expect(screen.getByText(/planned until .* UTC, 24 h ahead/)).toBeDefined();
  });

  it("summarises a mesh's members and tests", async () => {
    mockScheduleApi();
    renderPage();
    expect(await screen.findByText("every agent")).toBeDefined();
    expect(screen.getByText("every 6 h, slip 6 h", { exact: false })).toBeDefined();
    expect(screen.getByText("· 20 s", { exact: false })).toBeDefined();
    expect(screen.getByText("every 5 min", { exact: false })).toBeDefined();
  });

  it("asks the server for the state and agent in the URL, and filters by state on click", async () => {
    const fetchMock = mockScheduleApi();
    renderPage("/schedule?agent=dca");
    await screen.findByText(MISSED_REASON);
    const first = requestedUrls(fetchMock, "/api/v1/slots/").find((url) => url.searchParams.get("limit") === "200");
    expect(first?.searchParams.get("agent")).toBe("dca");
    expect(first?.searchParams.has("start")).toBe(true);
    expect(first?.searchParams.has("state")).toBe(false);

    fireEvent.click(await screen.findByRole("button", { name: "Missed" }));
    await vi.waitFor(() => {
      const states = requestedUrls(fetchMock, "/api/v1/slots/").map((url) => url.searchParams.get("state"));
      expect(states).toContain("missed");
    });
    const last = requestedUrls(fetchMock, "/api/v1/slots/").at(-1);
    expect(last?.searchParams.get("agent")).toBe("dca");
  });

  it("says what to do when there are no meshes, and keeps other panels when one fails", async () => {
    mockScheduleApi({ "/api/v1/meshes/": [], "/api/v1/slots/utilization/": 500 });
    renderPage();
    const advice = await screen.findByText(/No meshes, so no tests run/);
    expect(within(advice).getByRole("link", { name: "Meshes" }).getAttribute("href")).toBe("/meshes");
    expect(advice.textContent).not.toContain("apply_mesh");
    expect(await screen.findByText(/Could not load exclusive time per agent: server error/)).toBeDefined();
    expect(await screen.findByText(MISSED_REASON)).toBeDefined();
  });

  it("draws the slots as a timeline per agent, one trace per state, over the window in the URL", async () => {
    const fetchMock = mockScheduleApi();
    renderPage("/schedule?window=3600");
    const chart = await screen.findByTestId("slot-timeline");
    expect(within(chart).getAllByRole("listitem").map((item) => item.textContent)).toEqual(["Planned", "OK", "Missed"]);
    const timeline = requestedUrls(fetchMock, "/api/v1/slots/").find((url) => url.searchParams.get("limit") === "5000");
    const startMs = new Date(timeline?.searchParams.get("start") ?? "").getTime();
    expect(Math.abs(Date.now() - 3600 * 1000 - startMs)).toBeLessThan(60_000);
    const endMs = new Date(timeline?.searchParams.get("end") ?? "").getTime();
    expect(Math.abs(Date.now() + 3600 * 1000 - endMs)).toBeLessThan(60_000);
    expect(screen.getByText(/3 slots on 2 agents/)).toBeDefined();
    expect(screen.getByText(/1 missed\./)).toBeDefined();
    expect(screen.getByRole("button", { name: "Last 1 h" }).getAttribute("aria-pressed")).toBe("true");

    fireEvent.click(screen.getByRole("button", { name: "Last 24 h" }));
    await vi.waitFor(() => {
      const starts = requestedUrls(fetchMock, "/api/v1/slots/")
        .filter((url) => url.searchParams.get("limit") === "5000")
        .map((url) => new Date(url.searchParams.get("start") ?? "").getTime());
      expect(starts.some((start) => Math.abs(Date.now() - 24 * 3600 * 1000 - start) < 60_000)).toBe(true);
    });
  });

  it("says so when the window has nothing to draw", async () => {
    mockScheduleApi({ "/api/v1/slots/": [] });
    renderPage();
    expect((await screen.findByTestId("slot-timeline-empty")).textContent).toContain("no slots from 6 h ago to as far ahead");
  });

  it("explains an empty filtered slot list", async () => {
    mockScheduleApi({ "/api/v1/slots/": [] });
    renderPage("/schedule?state=missed");
    expect(await screen.findByText(/No missed slots in the last 24 h/)).toBeDefined();
  });
});
