import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, within } from "@testing-library/react";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { PathAnalysis, RttSeries } from "../api/queries";
import type { PlotlyChartProps } from "../components/PlotlyChart";
import {
  ANALYSIS,
  CHOICES,
  DESTINATION,
  EMPTY_ANALYSIS,
  RW_EVIDENCE,
  SOURCE,
  UNKNOWN_CEILINGS,
} from "../test/analysisFixtures";
import { mockApi, requestedUrls, type ApiRoutes } from "../test/mockApi";
import { PathPage } from "./PathPage";

// Plotly does not run in jsdom; the traces themselves are tested in lib/ceilingTraces.test.ts.
vi.mock("../components/PlotlyChart", () => ({
  PlotlyChart: ({ data, testId }: PlotlyChartProps) => (
    <ul data-testid={testId}>
      {data.map((trace, index) => (
        <li key={index}>{String(trace.name)}</li>
      ))}
    </ul>
  ),
}));

const ANALYSIS_PATH = "/api/v1/analysis/path/";

const RTT: RttSeries = {
  source: SOURCE,
  destination: DESTINATION,
  start: "2026-11-22T11:00:00Z",
  end: "2026-11-22T12:00:00Z",
  bucket_s: 60,
  points: [],
};

function renderPath(overrides: ApiRoutes = {}) {
  const fetchMock = mockApi({
    "/api/v1/choices/": CHOICES,
    "/api/v1/paths/rtt/": RTT,
    [ANALYSIS_PATH]: ANALYSIS,
    ...overrides,
  });
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[`/paths/${SOURCE.id}/${DESTINATION.id}`]}>
        <Routes>
          <Route path="/paths/:source/:destination" element={<PathPage />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return fetchMock;
}

function panel(title: string): HTMLElement {
  return screen.getByRole("region", { name: title });
}

describe("PathPage analysis", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("charts runs against a ceiling line per RTT mode", async () => {
    const fetchMock = renderPath();
    const chart = await screen.findByTestId("ceiling-chart");
    const names = within(chart)
      .getAllByRole("listitem")
      .map((item) => item.textContent);
    expect(names).toEqual([
      "ceiling of each run",
      "mode 1: 7.9 ms -> 3.2 Gbit/s",
      "mode 2: 12.1 ms -> 2.1 Gbit/s",
      "Receive window limited",
      "Capacity limited",
    ]);
    const request = requestedUrls(fetchMock, ANALYSIS_PATH)[0];
    expect(request?.searchParams.get("source")).toBe(SOURCE.id);
    expect(request?.searchParams.get("destination")).toBe(DESTINATION.id);
    expect(request?.searchParams.has("goal_bps")).toBe(false);
    // The RTT part still renders above it.
    expect(await screen.findByTestId("rtt-empty")).toBeDefined();
  });

  it("says what limits the path: server-coloured diagnosis, evidence and the winning term", async () => {
    renderPath();
    await screen.findByTestId("ceiling-chart");
    const limits = panel("What limits this path");
    const badge = within(limits).getByText("Receive window limited");
    expect(badge.style.backgroundColor).toBe("rgb(188, 76, 0)");
    for (const sentence of RW_EVIDENCE) {
      expect(within(limits).getByText(sentence)).toBeDefined();
    }
    expect(within(limits).getByText("97.0 %")).toBeDefined();
    const winning = limits.querySelector("tr.winning");
    expect(winning?.getAttribute("data-term")).toBe("receive_window");
    expect(winning?.textContent).toContain("limits");
    expect(
      within(limits).getByText("unknown — no loss measured: the loss ceiling has no finite bound"),
    ).toBeDefined();
    expect(within(limits).getByText("kernel 6.8 scaling_ratio (planning value 0.5)")).toBeDefined();
    expect(within(limits).getByText("6 MiB")).toBeDefined();
  });

  it("lists RTT modes with their traceroute paths and ceilings", async () => {
    renderPath();
    await screen.findByTestId("ceiling-chart");
    const modes = panel("RTT modes");
    expect(within(modes).getByText("Bimodal RTT (ECMP)").style.backgroundColor).toBe("rgb(188, 76, 0)");
    expect(within(modes).getByText("10.0.0.1 → 10.1.0.1 → 10.2.0.2")).toBeDefined();
    const rows = within(modes).getAllByRole("row");
    expect(rows[2]?.textContent).toContain("—");
    expect(rows[2]?.textContent).toContain("2.1 Gbit/s (Receive window)");
    expect(rows[1]?.textContent).toContain("62.5 %");
    expect(within(modes).getByText("a candidate for a second RTT mode")).toBeDefined();
    expect(within(modes).queryByTestId("time-modes")).toBeNull();
  });

  it("says why an ECMP sweep's modes stand when newer sweeps saw one mode", async () => {
    const choice = "ECMP modes (7.80, 11.90 ms) of the sweep at 2026-11-22T11:00:00+00:00 still stand";
    renderPath({ [ANALYSIS_PATH]: { ...ANALYSIS, modes: { ...ANALYSIS.modes, held_by_sweeps: 1, choice } } });
    await screen.findByTestId("ceiling-chart");
    const modes = panel("RTT modes");
    expect(within(modes).getByText(/^modes of the sweep /)).toBeDefined();
    expect(within(modes).getByText(choice)).toBeDefined();
  });

  it("shows advice, the capacity plan and findings", async () => {
    renderPath();
    await screen.findByTestId("ceiling-chart");
    expect(within(panel("Advice")).getByText("4096 131072 31457280")).toBeDefined();
    expect(within(panel("Advice")).getByText(/Sized for 10 Gbit\/s/)).toBeDefined();
    const plan = panel("Capacity plan");
    expect(within(plan).getByText("10.2 h")).toBeDefined();
    expect(within(plan).getByText("no")).toBeDefined();
    expect(within(plan).getByText(/it takes 10.2 h a day: the volume fits/)).toBeDefined();
    const findings = panel("Findings");
    expect(within(findings).getByText("-66 %")).toBeDefined();
    expect(within(findings).getByText("Open").style.backgroundColor).toBe("rgb(207, 34, 46)");
    expect(within(findings).getByText("net.ipv4.tcp_rmem changed on dcb at 05:58")).toBeDefined();
    expect(within(findings).getByText("2026-11-22 06:00:00 UTC")).toBeDefined();
  });

  it("asks again with the goal rate and daily volume the user types", async () => {
    const fetchMock = renderPath();
    await screen.findByTestId("ceiling-chart");
    fireEvent.change(within(panel("Advice")).getByLabelText(/Goal rate/), { target: { value: "25" } });
    fireEvent.click(within(panel("Advice")).getByRole("button", { name: "Apply" }));
    await vi.waitFor(() => {
      expect(requestedUrls(fetchMock, ANALYSIS_PATH).at(-1)?.searchParams.get("goal_bps")).toBe("25000000000");
    });
    fireEvent.change(within(panel("Capacity plan")).getByLabelText(/Daily volume/), { target: { value: "20" } });
    fireEvent.click(within(panel("Capacity plan")).getByRole("button", { name: "Apply" }));
    await vi.waitFor(() => {
      const last = requestedUrls(fetchMock, ANALYSIS_PATH).at(-1);
      expect(last?.searchParams.get("daily_volume_bytes")).toBe(String(20 * 2 ** 40));
      expect(last?.searchParams.get("goal_bps")).toBe("25000000000");
    });
  });

  it("refuses a goal the server would reject, without asking it", async () => {
    const fetchMock = renderPath();
    await screen.findByTestId("ceiling-chart");
    const before = requestedUrls(fetchMock, ANALYSIS_PATH).length;
    fireEvent.change(within(panel("Advice")).getByLabelText(/Goal rate/), { target: { value: "0" } });
    fireEvent.click(within(panel("Advice")).getByRole("button", { name: "Apply" }));
    expect(within(panel("Advice")).getByRole("alert").textContent).toContain("Give a goal between");
    expect(requestedUrls(fetchMock, ANALYSIS_PATH)).toHaveLength(before);
  });

  it("says what to do on a path with nothing measured", async () => {
    renderPath({ [ANALYSIS_PATH]: EMPTY_ANALYSIS });
    const empty = await screen.findByTestId("ceiling-empty");
    expect(empty.textContent).toContain("No throughput run analysed yet: the default mesh runs one every 6 h");
    expect(screen.queryByTestId("ceiling-chart")).toBeNull();
    expect(within(panel("What limits this path")).getByText(/No throughput run analysed yet/)).toBeDefined();
    const modes = panel("RTT modes");
    expect(within(modes).getByText("Too little data")).toBeDefined();
    expect(within(modes).getByText(/No RTT modes to show/).textContent).toContain("flowsweep");
    expect(within(panel("Advice")).getByText(/No advice yet/)).toBeDefined();
    expect(within(panel("Capacity plan")).getByText("no throughput measured yet")).toBeDefined();
    expect(within(panel("Findings")).getByText(/No findings on this path/)).toBeDefined();
  });

  it("survives every term unknown and runs with missing fields", async () => {
    const broken: PathAnalysis = {
      ...EMPTY_ANALYSIS,
      ceilings_now: UNKNOWN_CEILINGS,
      runs: [
        {
          run_id: "66666666-6666-4666-8666-666666666666",
          started_at: "2026-11-22T12:00:00Z",
          streams: 4,
          rate_bps: null,
          ceiling_bps: null,
          fraction_of_ceiling: null,
          limit: "unknown",
          diagnosis: "unknown",
          evidence: null,
          ceilings: {},
          inputs: null,
          interval_stats: null,
          iperf3_version: "",
        },
      ],
      modes: {
        ...EMPTY_ANALYSIS.modes,
        verdict: "single",
        modes: [
          { rtt_ms: 7.9, min_rtt_ms: 7.8, flow_count: 64, share: 1, src_ports: [], trace_path: [], ceiling: "garbage" },
        ],
        time_modes: {
          kind: "route_change",
          levels_ms: [7.9, 12.1],
          change_times: ["2026-11-22T09:30:00Z"],
          reason: "base RTT stepped once",
        },
      },
    };
    renderPath({ [ANALYSIS_PATH]: broken });
    const limits = await screen.findByRole("region", { name: "What limits this path" });
    await within(limits).findByText("Unknown");
    expect(within(limits).getByText(/Every term is unknown/)).toBeDefined();
    expect(within(limits).getByText("unknown — link speed unknown")).toBeDefined();
    expect(within(limits).getByText("The diagnosis came with no evidence sentences.")).toBeDefined();
    expect(limits.querySelector("tr.winning")).toBeNull();
    expect(within(limits).getAllByText("source not reported")).toHaveLength(4);
    const chart = await screen.findByTestId("ceiling-chart");
    expect(within(chart).queryAllByRole("listitem")).toHaveLength(0);
    const modes = panel("RTT modes");
    expect(within(modes).getAllByRole("row")[1]?.textContent).toContain("—");
    expect(within(modes).getByTestId("time-modes").textContent).toBe(
      "Over time the base RTT moved between levels (a route change): 7.90 ms → 12.10 ms, changing at " +
        "2026-11-22 09:30:00 UTC. base RTT stepped once",
    );
    expect(screen.queryByText(/failed to render/)).toBeNull();
  });

  it("reports a failed analysis in each panel and keeps the RTT chart", async () => {
    renderPath({ [ANALYSIS_PATH]: 500 });
    expect(await screen.findByText("Could not load the throughput runs: server error.")).toBeDefined();
    expect(await screen.findByText("Could not load the findings: server error.")).toBeDefined();
    expect(screen.getByTestId("rtt-empty")).toBeDefined();
    // The forms stay, so a bad goal can be changed back.
    expect(within(panel("Advice")).getByLabelText(/Goal rate/)).toBeDefined();
  });
});
