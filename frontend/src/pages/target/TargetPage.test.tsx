import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { cleanup, fireEvent, render, screen, within } from "@testing-library/react";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { LatencyPoint } from "../../api/latencyQueries";
import type { TargetLatencySeries, TargetRoutes, TargetRttSeries, TargetRun, TargetRuns } from "../../api/targetQueries";
import { mockApi, reply, requestedUrls, type ApiRoutes } from "../../test/mockApi";
import { sessionRoutes } from "../../test/render";
import { TargetPage } from "./TargetPage";

const ATHENS = { id: "11111111-1111-4111-8111-111111111111", name: "athens" };
const HOUR_AGO = new Date(Date.now() - 3600_000).toISOString();
const NOW = new Date().toISOString();

const SERIES: TargetRttSeries = {
  source: ATHENS,
  target: "example.org",
  from: HOUR_AGO,
  to: NOW,
  retained_from: new Date(Date.now() - 30 * 86_400_000).toISOString(),
  bucket_s: 60,
  latest: [{ test_type: "ping", run_id: "r1", started_at: NOW, status: "ok" }],
  points: [{ t: HOUR_AGO, min: 7.8, p10: 7.9, p50: 8.1, p90: 9, max: 12, count: 9, sent: 10, lost: 1, loss: 0.1 }],
};

function latencyPoint(time: string, oneWayTrusted: boolean): LatencyPoint {
  return {
    time, sent: 580, answered: 568, forward_lost: 1, backward_lost: 11, forward_loss_fraction: 1 / 580,
    backward_loss_fraction: 11 / 579, forward_min_ms: 20, forward_p50_ms: 20.1, forward_p90_ms: 20.2,
    forward_p99_ms: 20.4, forward_max_ms: 21, backward_min_ms: 5, backward_p50_ms: 5.1, backward_p90_ms: 5.2,
    backward_p99_ms: 5.3, backward_max_ms: 5.6, round_trip_min_ms: 25, round_trip_p50_ms: 25.2, round_trip_p99_ms: 25.6,
    clock_error_ms: 0.002, one_way_trusted: oneWayTrusted, loaded: false,
  };
}  // prettier-ignore

// A router's reflector that declared its clock unsynchronized for the latest minute.
const LATENCY: TargetLatencySeries = {
  source: ATHENS, target: "example.org", from: HOUR_AGO, to: NOW, retained_from: SERIES.retained_from, bucket_s: 60,
  clock_error_limit_ms: 0.5, points: [latencyPoint(HOUR_AGO, true), latencyPoint(NOW, false)],
};  // prettier-ignore
const WITH_LATENCY: TargetRttSeries = {
  ...SERIES,
  latest: [...SERIES.latest, { test_type: "latency", run_id: "l1", started_at: NOW, status: "ok" }],
};

function run(id: string, status: TargetRun["status"], error = "", testType: TargetRun["test_type"] = "ping"): TargetRun {
  return { id, test_type: testType, test_id: "t", started_at: NOW, ended_at: NOW, status, error,
    summary: status === "ok" ? { rtt_median_ms: 8.1, loss_fraction: 0 } : {} };
}  // prettier-ignore

function runs(...list: TargetRun[]): TargetRuns {
  return { source: ATHENS, target: "example.org", runs: list, next_before: null };
}

const HOP = { ttl: 1, address: "198.18.128.1", other_addresses: [], rtt_ms: 1.5, hostname: null, asn: null,
  as_owner: null, mtu: 1500 };  // prettier-ignore
const ROUTES: TargetRoutes = {
  source: ATHENS, target: "example.org", from: HOUR_AGO, to: NOW, retained_from: HOUR_AGO,
  routes: [{ label: "A", fingerprint: "fa", reached: true, hops: [HOP], first_seen: NOW, last_seen: NOW, runs: 1,
    flows: 16, latest_flows: 16, path_mtu: 1500, unanswered_hops: 0 }],
  runs: [{ time: NOW, run_id: "t1", flows: { A: 16 } }],
  changes: [],
  truncated: false,
};  // prettier-ignore
const NO_ROUTES: TargetRoutes = { ...ROUTES, routes: [], runs: [] };

function renderPage(routes: ApiRoutes, entry = `/targets/${ATHENS.id}/Example.ORG`) {
  const fetchMock = mockApi({
    ...sessionRoutes("viewer", { run_status: [{ value: "failed", label: "Failed", color: "#cf222e" }] }),
    "/api/v1/meshes/": [{ name: "dns-watch", kind: "list", targets: ["example.org"] }],
    "/api/v1/targets/rtt/": SERIES,
    "/api/v1/targets/runs/": runs(run("r1", "ok")),
    "/api/v1/targets/routes/": ROUTES,
    ...routes,
  });
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[entry]}>
        <Routes>
          <Route path="/targets/:source/:target" element={<TargetPage />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return fetchMock;
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe("TargetPage", () => {
  it("shows RTT on a time axis, the recent runs and the routes of one target path", async () => {
    const fetchMock = renderPage({
      "/api/v1/targets/runs/": runs(run("r2", "failed", "ping: sendmsg: Network is unreachable"), run("r1", "ok")),
    });
    expect((await screen.findByRole("heading", { level: 1 })).textContent).toBe("athens → example.org");
    expect(await screen.findByText(/named by the list mesh dns-watch/)).toBeDefined();
    const chart = await screen.findByTestId("target-rtt-chart");
    expect(within(chart).getByText("RTT median")).toBeDefined();
    expect(within(chart).getByText("failed runs")).toBeDefined();
    const table = await screen.findByTestId("target-runs");
    expect(within(table).getByText("ping: sendmsg: Network is unreachable")).toBeDefined();
    expect(within(table).getByText("median 8.10 ms, 0.0 % loss")).toBeDefined();
    expect(screen.getByText(/1 ok, 1 failed/)).toBeDefined();
    expect((await screen.findByTestId("target-routes-summary")).textContent).toContain("1 route in 1 trace runs");
    expect(screen.getByTestId("target-route-diff")).toBeDefined();

    const [url] = requestedUrls(fetchMock, "/api/v1/targets/rtt/");
    expect(url?.searchParams.get("source")).toBe(ATHENS.id);
    expect(url?.searchParams.get("target")).toBe("example.org");
    expect(url?.searchParams.has("to")).toBe(false);

    fireEvent.click(screen.getByRole("checkbox"));
    expect(within(screen.getByTestId("target-runs")).getAllByRole("row").length).toBe(2);
  });

  it("adds the latency test's rows each way, and the round trip where the device's clock is unsynchronized", async () => {
    const fetchMock = renderPage({
      "/api/v1/targets/rtt/": WITH_LATENCY,
      "/api/v1/targets/latency/": LATENCY,
      "/api/v1/targets/runs/": runs(run("l1", "ok", "", "latency"), run("r1", "ok")),
    });
    const chart = await screen.findByTestId("target-rtt-chart");
    await within(chart).findByText("athens → example.org one-way median");
    expect(within(chart).getByText("example.org → athens loss")).toBeDefined();
    expect(within(chart).getByText(/^round trip median/)).toBeDefined();
    expect(within(chart).getByText("RTT median")).toBeDefined();
    expect(screen.getByText(/device declares its clock unsynchronized, or the two clocks.* exceeds 0.5 ms/)).toBeDefined();
    const [url] = requestedUrls(fetchMock, "/api/v1/targets/latency/");
    expect(url?.searchParams.get("target")).toBe("example.org");
    expect(url?.searchParams.get("source")).toBe(ATHENS.id);
    expect(url?.searchParams.has("to")).toBe(false);
  });

  it("draws a target measured by its latency test only", async () => {
    renderPage({
      "/api/v1/targets/rtt/": { ...WITH_LATENCY, points: [], latest: WITH_LATENCY.latest.slice(1) },
      "/api/v1/targets/latency/": LATENCY,
    });
    const chart = await screen.findByTestId("target-rtt-chart");
    await within(chart).findByText("athens → example.org one-way median");
    expect(within(chart).queryByText("RTT median")).toBeNull();
    expect(screen.getByTestId("target-rtt-no-pings")).toBeDefined();
  });

  it("asks for no latency when the target has no latency test, and says why the test could not load", async () => {
    const fetchMock = renderPage({});
    await screen.findByTestId("target-rtt-chart");
    expect(requestedUrls(fetchMock, "/api/v1/targets/latency/")).toEqual([]);
    cleanup();
    renderPage({ "/api/v1/targets/rtt/": WITH_LATENCY, "/api/v1/targets/latency/": reply(400, { detail: "bad range" }) });
    expect((await screen.findByText(/Could not load the target's latency test/)).textContent).toContain("bad range");
    expect(within(screen.getByTestId("target-rtt-chart")).getByText("RTT median")).toBeDefined();
  });

  it("says when every run failed", async () => {
    renderPage({
      "/api/v1/targets/rtt/": { ...SERIES, points: [] },
      "/api/v1/targets/runs/": runs(run("r2", "failed", "100% packet loss"), run("r1", "failed", "100% packet loss")),
      "/api/v1/targets/routes/": NO_ROUTES,
    });
    expect((await screen.findByTestId("target-rtt-only-failed")).textContent).toContain("2 runs failed");
    expect((await screen.findByTestId("target-only-failed")).textContent).toContain("Every one of the newest 2 runs");
    expect(await screen.findByTestId("target-routes-empty")).toBeDefined();
  });

  it("says when the range holds no data", async () => {
    renderPage({ "/api/v1/targets/rtt/": { ...SERIES, points: [] } }, `/targets/${ATHENS.id}/example.org?range=1h`);
    expect((await screen.findByTestId("target-rtt-empty")).textContent).toContain("No pings of this target");
    expect(screen.queryByTestId("target-rtt-chart")).toBeNull();
  });

  it("says where raw retention cut a long range", async () => {
    renderPage({}, `/targets/${ATHENS.id}/example.org?range=1y`);
    expect((await screen.findByTestId("target-retention")).textContent).toContain("Targets have no rollups");
  });

  it("says so when the agent never measured the target", async () => {
    renderPage({
      "/api/v1/targets/rtt/": reply(404, { detail: "athens has no runs to the target 'nowhere.example'" }),
      "/api/v1/targets/runs/": reply(404, { detail: "athens has no runs to the target 'nowhere.example'" }),
    });
    expect((await screen.findByTestId("target-unknown")).textContent).toContain("has no runs to the target");
  });
});
