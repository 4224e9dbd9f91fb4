import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, within } from "@testing-library/react";
import { MemoryRouter, Route, Routes, useSearchParams } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { PathHistory } from "../../lib/historyFigure";
import { rangeFromParams } from "../../lib/historyRange";
import { CHOICES, DESTINATION, SOURCE } from "../../test/analysisFixtures";
import { mockApi, requestedUrls, type ApiRoutes } from "../../test/mockApi";
import { TIMELINE } from "../../test/timelineFixtures";
import { HistorySection } from "./HistorySection";

const HISTORY: PathHistory = {
  source: SOURCE,
  destination: DESTINATION,
  family: 4,
  resolution: "minute",
  bucket_s: 60,
  from: "2026-11-22T11:00:00Z",
  to: "2026-11-22T12:00:00Z",
  rtt: [{ t: "2026-11-22T11:00:00Z", min: 7.8, p10: 7.9, p50: 8.1, p90: 9, max: 12, count: 10, sent: 10, lost: 1, loss: 0.1, own_load: 2 }],
  throughput: [{ t: "2026-11-22T11:00:00Z", runs_ok: 1, runs_failed: 0, min_bps: 3e9, median_bps: 3e9, max_bps: 3e9, retransmits: 2 }],
  reverse: { rtt: [], throughput: [] },
};
const EMPTY: PathHistory = { ...HISTORY, rtt: [], throughput: [] };
const UNCAPPED = { ...TIMELINE, reverse: { ...TIMELINE.reverse, runs_capped: false } };
const LATENCY_POINT = {
  time: "2026-11-22T11:00:00Z", sent: 580, answered: 568, forward_lost: 12, backward_lost: 0,
  forward_loss_fraction: 12 / 580, backward_loss_fraction: 0, forward_min_ms: 20, forward_p50_ms: 20.1,
  forward_p90_ms: 20.2, forward_p99_ms: 20.4, forward_max_ms: 21, backward_min_ms: 5, backward_p50_ms: 5.1,
  backward_p90_ms: 5.2, backward_p99_ms: 5.3, backward_max_ms: 5.6, round_trip_min_ms: 25, round_trip_p50_ms: 25.2,
  round_trip_p99_ms: 25.6, clock_error_ms: 0.002, one_way_trusted: true, loaded: false,
};  // prettier-ignore
const EMPTY_TIMELINE = {
  ...UNCAPPED,
  forward: { ...UNCAPPED.forward, runs: [], sweeps: [] },
  reverse: { ...UNCAPPED.reverse, runs: [], sweeps: [] },
  findings: [],
};
const FAILED = [{ id: "r1", test_type: "throughput", test_id: "t", started_at: "2026-11-22T11:30:00Z", ended_at: null,
  status: "failed", error: "iperf3: the server is busy running a test" }];  // prettier-ignore

function renderSection(entry: string, routes: ApiRoutes = {}) {
  const fetchMock = mockApi({
    "/api/v1/paths/history/": HISTORY,
    "/api/v1/paths/runs/": [],
    "/api/v1/analysis/findings/": [],
    "/api/v1/analysis/path/timeline/": UNCAPPED,
    "/api/v1/choices/": CHOICES,
    ...routes,
  });
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[entry]}>
        <Routes>
          <Route path="/paths/:source/:destination" element={<RoutedSection />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return fetchMock;
}

/** The page's own wiring: the range comes from the URL. */
function RoutedSection() {
  const [params] = useSearchParams();
  return <HistorySection source={SOURCE.id} destination={DESTINATION.id} range={rangeFromParams(params, new Date())} />;
}

const PATH = `/paths/${SOURCE.id}/${DESTINATION.id}`;

describe("HistorySection", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("draws throughput, RTT and loss on one chart and asks for the named range", async () => {
    const fetchMock = renderSection(`${PATH}?range=30d`);
    const chart = await screen.findByTestId("history-chart");
    expect(within(chart).getByText("RTT median")).toBeDefined();
    expect(within(chart).getByText("dca → dcb throughput")).toBeDefined();
    const asked = requestedUrls(fetchMock, "/api/v1/paths/history/")[0];
    // A range back from now leaves `to` to the server: what arrived this minute is in it.
    expect(asked?.searchParams.has("to")).toBe(false);
    const span = Date.now() - new Date(asked?.searchParams.get("from") ?? "").getTime();
    expect(Math.round(span / 86_400_000)).toBe(30);
    expect(screen.getByRole("button", { name: "30 days" }).getAttribute("aria-pressed")).toBe("true");

    fireEvent.click(screen.getByRole("button", { name: "1 year" }));
    await vi.waitFor(() => {
      const last = requestedUrls(fetchMock, "/api/v1/paths/history/").at(-1);
      const days = (Date.now() - new Date(last?.searchParams.get("from") ?? "").getTime()) / 86_400_000;
      expect(Math.round(days)).toBe(365);
    });
  });

  it("asks for a link's explicit bounds and refuses a reversed custom range", async () => {
    const fetchMock = renderSection(`${PATH}?from=2026-11-20T00:00:00Z&to=2026-11-21T00:00:00Z`);
    await screen.findByTestId("history-chart");
    const asked = requestedUrls(fetchMock, "/api/v1/paths/history/")[0];
    expect(asked?.searchParams.get("from")).toBe("2026-11-20T00:00:00.000Z");
    expect(asked?.searchParams.get("to")).toBe("2026-11-21T00:00:00.000Z");
    fireEvent.change(screen.getByLabelText("From (UTC)"), { target: { value: "2026-11-21T10:00" } });
    fireEvent.change(screen.getByLabelText("to"), { target: { value: "2026-11-21T09:00" } });
    fireEvent.click(screen.getByRole("button", { name: "Show" }));
    expect(screen.getByRole("alert").textContent).toContain("must end after it starts");
  });

  it("says why a link's range was not used", async () => {
    renderSection(`${PATH}?from=2026-11-21T00:00:00Z&to=2026-11-20T00:00:00Z`);
    expect((await screen.findByRole("note")).textContent).toContain("ends before it starts");
  });

  it("explains an empty range, and a range whose runs all failed", async () => {
    renderSection(PATH, { "/api/v1/paths/history/": EMPTY });
    expect((await screen.findByTestId("history-empty")).textContent).toContain("No measurements of this path");
  });

  it("draws the failed runs when nothing else came back", async () => {
    renderSection(PATH, { "/api/v1/paths/history/": EMPTY, "/api/v1/paths/runs/": FAILED });
    expect(await screen.findByTestId("history-only-failed")).toBeDefined();
    expect(within(await screen.findByTestId("history-chart")).getByText("failed runs")).toBeDefined();
  });

  it("draws each run, its ceilings, the ECMP modes and the changes from the path's timeline", async () => {
    const fetchMock = renderSection(`${PATH}?range=7d`);
    const chart = await screen.findByTestId("history-chart");
    await within(chart).findByText("dca → dcb TCP runs");
    for (const name of ["dca → dcb UDP runs", "dca → dcb ceiling (1 stream)", "ECMP mode 2", "tuning changes", "findings"]) {
      expect(within(chart).getByText(name)).toBeDefined();
    }
    // The same range as the history's: back from now, `to` left to the server.
    const asked = requestedUrls(fetchMock, "/api/v1/analysis/path/timeline/")[0];
    expect(asked?.searchParams.has("to")).toBe(false);
    expect(asked?.searchParams.get("source")).toBe(SOURCE.id);
    expect(screen.queryByTestId("timeline-capped")).toBeNull();
  });

  it("says when only the newest runs are shown", async () => {
    renderSection(PATH, { "/api/v1/analysis/path/timeline/": TIMELINE });
    expect((await screen.findByTestId("timeline-capped")).textContent).toContain("newest 1,500 runs of each direction");
  });

  it("opens a finding's evidence from the URL and closes it", async () => {
    renderSection(`${PATH}?finding=7`);
    const evidence = await screen.findByTestId("finding-evidence");
    expect(evidence.textContent).toContain("Throughput down -66 %");
    expect(evidence.textContent).toContain("dca → dcb");
    expect(within(evidence).getByText("open_threshold_bps").nextSibling?.textContent).toBe("8.2 Gbit/s");
    expect(evidence.textContent).toContain("9.1 Gbit/s → 3.1 Gbit/s");
    fireEvent.click(within(evidence).getByRole("button", { name: "Close" }));
    await vi.waitFor(() => {
      expect(screen.queryByTestId("finding-evidence")).toBeNull();
    });
  });

  it("still draws the rollups when the timeline fails", async () => {
    renderSection(PATH, { "/api/v1/analysis/path/timeline/": 500 });
    expect(await screen.findByText(/runs, ceilings and changes could not be loaded/)).toBeDefined();
    expect(within(screen.getByTestId("history-chart")).getByText("RTT median")).toBeDefined();
  });

  it("adds one-way delay and loss each way when the path has a latency test", async () => {
    const fetchMock = renderSection(PATH, {
      "/api/v1/paths/latency/": { source: SOURCE, destination: DESTINATION, start: HISTORY.from, end: HISTORY.to,
        bucket_s: 60, clock_error_limit_ms: 0.5, points: [LATENCY_POINT] },
    });  // prettier-ignore
    const chart = await screen.findByTestId("history-chart");
    await within(chart).findByText("dca → dcb one-way median");
    expect(within(chart).getByText("dcb → dca loss")).toBeDefined();
    expect(screen.getByText(/where it exceeds 0.5 ms/)).toBeDefined();
    expect(screen.getByTestId("one-way-median").textContent).toBe("→ 20.10 ms · ← 5.10 ms");
    expect(screen.getByTestId("one-way-loss").textContent).toBe("→ 2.07 % · ← 0 % (of 580 packets outside Fathom's own tests)");
    const asked = requestedUrls(fetchMock, "/api/v1/paths/latency/")[0];
    expect(asked?.searchParams.get("source")).toBe(SOURCE.id);
    expect(asked?.searchParams.has("end")).toBe(false);
    // A day in buckets no finer than a minute, an interval's default length.
    expect(asked?.searchParams.get("max_points")).toBe("1000");
  });

  it("draws a path measured by its latency test alone", async () => {
    // A perfSONAR node's latencybg towards an agent: no pings or runs, one-way rows only.
    renderSection(PATH, {
      "/api/v1/paths/history/": EMPTY,
      "/api/v1/analysis/path/timeline/": EMPTY_TIMELINE,
      "/api/v1/paths/latency/": { source: SOURCE, destination: DESTINATION, start: HISTORY.from, end: HISTORY.to,
        bucket_s: 60, clock_error_limit_ms: 0.5, points: [LATENCY_POINT] },
    });  // prettier-ignore
    const chart = await screen.findByTestId("history-chart");
    await within(chart).findByText("dca → dcb one-way median");
    expect(screen.queryByTestId("history-empty")).toBeNull();
    expect(screen.queryByTestId("history-only-failed")).toBeNull();
    expect(screen.getByTestId("one-way-median").textContent).toBe("→ 20.10 ms · ← 5.10 ms");
  });

  it("shows the server's refusal instead of a blank chart", async () => {
    renderSection(PATH, { "/api/v1/paths/history/": 400 });
    expect(await screen.findByText(/Could not load the path's history/)).toBeDefined();
  });
});
