import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { MemoryRouter, Route, Routes, useLocation } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { PathList, PathListEntry, PathSpark } from "../api/pathListQueries";
import type { Mesh } from "../api/queries";
import { CHOICES, type AgentRef } from "../test/analysisFixtures";
import { mockApi, reply, requestedUrls, type ApiRoutes, type MockRequest } from "../test/mockApi";
import { PathsPage, pathHref } from "./PathsPage";

const A = { id: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", name: "dca" };
const B = { id: "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb", name: "dcb" };
const C = { id: "cccccccc-cccc-4ccc-8ccc-cccccccccccc", name: "edge-1" };

const GENERATED_AT = "2026-11-22T12:10:00Z";
const MESHES: Mesh[] = [{ name: "lab", kind: "mesh", enabled: true, all_agents: true }];
const LABELS = {
  ...CHOICES,
  run_status: [
    { value: "ok", label: "OK", color: "#1a7f37" },
    { value: "failed", label: "Failed", color: "#cf222e" },
  ],
};

function summary(source: AgentRef, destination: AgentRef, fields: Partial<PathListEntry> = {}): PathListEntry {
  return {
    source,
    destination,
    family: 4,
    test_types: ["ping", "throughput"],
    last_run_at: "2026-11-22T12:05:00Z",
    last_run_status: "ok",
    last_run_test_type: "ping",
    data_age_s: 300,
    rtt_median_ms: 7.9,
    loss_fraction: 0.001,
    forward_loss_fraction: null,
    backward_loss_fraction: null,
    rate_bps: 3.1e9,
    ceiling_bps: 3.2e9,
    fraction_of_ceiling: 0.97,
    diagnosis: "receive_window",
    limit: "receive_window",
    measured_at: "2026-11-22T11:00:00Z",
    open_findings: 0,
    ...fields,
  };
}

const NOTHING: Partial<PathListEntry> = {
  test_types: ["ping"],
  rtt_median_ms: null,
  loss_fraction: null,
  rate_bps: null,
  ceiling_bps: null,
  fraction_of_ceiling: null,
  diagnosis: null,
  limit: null,
  measured_at: null,
};

const PATHS: PathListEntry[] = [
  summary(A, B, { open_findings: 2 }),
  summary(B, A, { ...NOTHING, rtt_median_ms: 140, last_run_status: "failed" }),
  // Silent for five hours: stale.
  summary(A, C, { data_age_s: 5 * 3600, last_run_at: "2026-11-22T07:10:00Z", diagnosis: "capacity", limit: "link" }),
];

function pathList(paths: PathListEntry[]): PathList {
  return { generated_at: GENERATED_AT, paths };
}

function spark(pair: string): PathSpark {
  const [source = "", destination = ""] = pair.split(":");
  return {
    source,
    destination,
    family: 4,
    rtt_p50_ms: Array.from({ length: 24 }, (_, hour) => (hour < 2 ? null : 7.5 + (hour % 3) / 10)),
    runs: [
      { started_at: "2026-11-22T05:00:00Z", rate_bps: 2.9e9, ceiling_bps: 3.2e9 },
      { started_at: "2026-11-22T11:00:00Z", rate_bps: 3.1e9, ceiling_bps: 3.2e9 },
    ],
  };
}

function sparks(request: MockRequest) {
  return {
    generated_at: GENERATED_AT,
    start: "2026-11-21T13:00:00Z",
    step_s: 3600,
    sparks: request.url.searchParams.getAll("pair").map(spark),
  };
}

function Where() {
  const location = useLocation();
  return <output data-testid="where">{location.pathname + location.search}</output>;
}

function where(): string {
  return screen.getByTestId("where").textContent;
}

function renderPaths(overrides: ApiRoutes = {}, entry = "/paths", targets?: React.ReactNode) {
  const fetchMock = mockApi({
    "/api/v1/choices/": LABELS,
    "/api/v1/meshes/": MESHES,
    "/api/v1/analysis/paths/": pathList(PATHS),
    "/api/v1/analysis/paths/spark/": sparks,
    ...overrides,
  });
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[entry]}>
        <Routes>
          <Route path="/paths" element={<PathsPage externalTargets={targets} />} />
          <Route path="/paths/:source/:destination" element={<p>path page</p>} />
        </Routes>
        <Where />
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return fetchMock;
}

/** The path names of the table's rows, top to bottom. */
function rowNames(): string[] {
  // DOM queries, not role queries: those take seconds over a page of 100 rows in jsdom.
  return [...document.querySelectorAll("table.path-list tbody tr")].map(
    (row) => row.querySelector("a")?.textContent ?? "",
  );
}

function sparkPairs(fetchMock: ReturnType<typeof mockApi>): string[][] {
  return requestedUrls(fetchMock, "/api/v1/analysis/paths/spark/").map((url) => url.searchParams.getAll("pair"));
}

describe("PathsPage", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("keeps pathHref for the modules that link to a path", () => {
    expect(pathHref("s", "d")).toBe("/paths/s/d");
  });

  it("shows each path's RTT, loss, throughput against its ceiling, limit, findings, age and trend", async () => {
    const fetchMock = renderPaths();
    await screen.findByText("dca → dcb");
    expect(rowNames()).toEqual(["dca → dcb", "dca → edge-1", "dcb → dca"]);
    expect(screen.getByText(/3 paths: 1 with open findings, 1 without data for over an hour/)).toBeDefined();

    const row = screen.getByText("dca → dcb").closest("tr");
    if (row === null) {
      throw new Error("no row");
    }
    const cells = within(row);
    expect(screen.getByText("dca → dcb").getAttribute("href")).toBe(`/paths/${A.id}/${B.id}`);
    expect(cells.getByText("7.90 ms")).toBeDefined();
    expect(cells.getByText("0.10 %")).toBeDefined();
    expect(cells.getByText("3.1 Gbit/s")).toBeDefined();
    expect(cells.getByText("of 3.2 Gbit/s")).toBeDefined();
    expect(cells.getByText("97.0 %")).toBeDefined();
    expect(cells.getByText("Receive window limited")).toBeDefined();
    // The diagnosis names the binding term already: no second line for it.
    expect(cells.queryByText(/ceiling:/)).toBeNull();
    expect(cells.getByLabelText("2 open findings").getAttribute("href")).toBe(`/paths/${A.id}/${B.id}`);
    expect(cells.getByText("5 min ago")).toBeDefined();
    expect(cells.getByText("OK")).toBeDefined();

    // Sparklines: one request for the rows shown, drawn as SVG with words for the hover.
    expect(await cells.findByRole("img", { name: /RTT median hourly over 24 h: 7.50 ms to 7.70 ms/ })).toBeDefined();
    expect(cells.getByRole("img", { name: /newest 3.1 Gbit\/s of 3.2 Gbit\/s/ })).toBeDefined();
    expect(sparkPairs(fetchMock)).toEqual([[`${A.id}:${B.id}`, `${A.id}:${C.id}`, `${B.id}:${A.id}`]]);

    const stale = screen.getByText("dca → edge-1").closest("tr");
    expect(stale?.className).toBe("stale-path");
    expect(within(stale as HTMLElement).getByText("5 h ago")).toBeDefined();
    expect(within(stale as HTMLElement).getByText("stale")).toBeDefined();
    expect(within(stale as HTMLElement).getByText("ceiling: Link")).toBeDefined();

    const unmeasured = screen.getByText("dcb → dca").closest("tr") as HTMLElement;
    expect(within(unmeasured).getByText("not measured")).toBeDefined();
    expect(within(unmeasured).getByText("Failed")).toBeDefined();
    expect(within(unmeasured).getByText("140 ms")).toBeDefined();
  });

  it("says there is nothing yet, and renders the external targets slot below", async () => {
    renderPaths({ "/api/v1/analysis/paths/": pathList([]) }, "/paths", <p>targets table</p>);
    expect((await screen.findByTestId("paths-empty")).textContent).toContain("No measurements yet");
    expect(screen.queryByRole("table")).toBeNull();
    expect(screen.getByText("targets table")).toBeDefined();
  });

  it("reports an API error", async () => {
    renderPaths({ "/api/v1/analysis/paths/": 500 });
    expect((await screen.findByRole("alert")).textContent).toContain("Could not load the paths");
  });

  it("asks the API for one mesh's paths and goes back to every path", async () => {
    const fetchMock = renderPaths({
      "/api/v1/analysis/paths/": (request: MockRequest) =>
        request.url.searchParams.get("mesh") === "gone"
          ? reply(404, { detail: "No mesh named 'gone'." })
          : pathList(request.url.searchParams.get("mesh") === "lab" ? [PATHS[0] as PathListEntry] : PATHS),
    }, "/paths?mesh=gone");
    expect((await screen.findByRole("alert")).textContent).toContain("No mesh named 'gone'.");
    fireEvent.click(screen.getByRole("button", { name: "Show every path" }));
    await screen.findByText("dcb → dca");
    expect(where()).toBe("/paths");

    fireEvent.change(screen.getByRole("combobox", { name: /Mesh/ }), { target: { value: "lab" } });
    await waitFor(() => {
      expect(rowNames()).toEqual(["dca → dcb"]);
    });
    expect(where()).toBe("/paths?mesh=lab");
    const meshes = requestedUrls(fetchMock, "/api/v1/analysis/paths/").map((url) => url.searchParams.get("mesh"));
    expect(meshes).toEqual(["gone", null, "lab"]);
  });

  it("filters by agent name, open findings, limit and last run, and says when nothing matches", async () => {
    renderPaths();
    await screen.findByText("dca → dcb");
    const search = screen.getByRole("searchbox", { name: /Agent/ });

    fireEvent.change(search, { target: { value: "EDGE" } });
    expect(rowNames()).toEqual(["dca → edge-1"]);
    expect(where()).toBe("/paths?q=EDGE");
    expect(screen.getByTestId("path-range").textContent).toBe("1–1 of 1 matching");

    fireEvent.change(search, { target: { value: "" } });
    fireEvent.click(screen.getByRole("checkbox", { name: /open findings only/ }));
    expect(rowNames()).toEqual(["dca → dcb"]);
    expect(where()).toBe("/paths?findings=open");
    fireEvent.click(screen.getByRole("checkbox", { name: /open findings only/ }));

    const limit = screen.getByRole<HTMLSelectElement>("combobox", { name: /Limit/ });
    fireEvent.change(limit, { target: { value: "capacity" } });
    expect(rowNames()).toEqual(["dca → edge-1"]);
    fireEvent.change(limit, { target: { value: "none" } });
    expect(rowNames()).toEqual(["dcb → dca"]);
    expect(where()).toBe("/paths?diagnosis=none");
    fireEvent.change(limit, { target: { value: "" } });

    const status = screen.getByRole<HTMLSelectElement>("combobox", { name: /Last run/ });
    expect([...status.options].map((option) => option.text)).toEqual(["any", "OK", "Failed", "no run"]);
    fireEvent.change(status, { target: { value: "failed" } });
    expect(rowNames()).toEqual(["dcb → dca"]);

    fireEvent.change(search, { target: { value: "edge" } });
    expect(screen.getByTestId("paths-no-match").textContent).toContain("No path matches these filters");
    expect(screen.queryByRole("table")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Clear the filters" }));
    expect(rowNames()).toHaveLength(3);
    expect(where()).toBe("/paths");
  });

  it("sorts by a column worst first, flips it on a second click, and keeps both in the URL", async () => {
    renderPaths();
    await screen.findByText("dca → dcb");
    const rtt = () => screen.getByRole("button", { name: /^RTT/ });

    fireEvent.click(rtt());
    expect(where()).toBe("/paths?sort=rtt");
    expect(rowNames()).toEqual(["dcb → dca", "dca → dcb", "dca → edge-1"]);
    expect(rtt().closest("th")?.getAttribute("aria-sort")).toBe("descending");

    fireEvent.click(rtt());
    expect(where()).toBe("/paths?sort=rtt&dir=asc");
    expect(rowNames()).toEqual(["dca → dcb", "dca → edge-1", "dcb → dca"]);
    expect(rtt().closest("th")?.getAttribute("aria-sort")).toBe("ascending");

    // Unknown values stay last: the unmeasured path has no fraction of its ceiling.
    fireEvent.click(screen.getByRole("button", { name: /^Of ceiling/ }));
    expect(where()).toBe("/paths?sort=fraction");
    expect(rowNames()[2]).toBe("dcb → dca");
    fireEvent.click(screen.getByRole("button", { name: /^Findings/ }));
    expect(rowNames()[0]).toBe("dca → dcb");
  });

  it("shows one-way loss each way, sorts worst first and filters by it, – without a latency test", async () => {
    const withLatency = [
      summary(A, B, { forward_loss_fraction: 0.0005, backward_loss_fraction: 0.02 }),
      summary(B, A, { forward_loss_fraction: 0.02, backward_loss_fraction: 0.0005 }),
      summary(A, C),
    ];
    renderPaths({ "/api/v1/analysis/paths/": pathList(withLatency) });
    await screen.findByText("dca → dcb");
    const cellsOf = (name: string) =>
      [...(screen.getByText(name).closest("tr")?.querySelectorAll("td") ?? [])].map((cell) => cell.textContent);
    // Path, RTT, loss, one-way →, one-way ←, ...
    expect(cellsOf("dca → dcb").slice(2, 5)).toEqual(["0.10 %", "0.050 %", "2.00 %"]);
    expect(cellsOf("dca → edge-1").slice(2, 5)).toEqual(["0.10 %", "–", "–"]);

    fireEvent.click(screen.getByRole("button", { name: /^One-way →/ }));
    expect(where()).toBe("/paths?sort=forward_loss");
    expect(rowNames()).toEqual(["dcb → dca", "dca → dcb", "dca → edge-1"]);
    fireEvent.click(screen.getByRole("button", { name: /^One-way ←/ }));
    expect(rowNames()).toEqual(["dca → dcb", "dcb → dca", "dca → edge-1"]);

    const oneWay = screen.getByRole<HTMLSelectElement>("combobox", { name: /One-way loss/ });
    expect([...oneWay.options].map((option) => option.text)).toEqual([
      "any",
      "≥ 0.1 % either way",
      "≥ 1 % either way",
      "no unloaded latency interval",
    ]);
    fireEvent.change(oneWay, { target: { value: "crit" } });
    expect(where()).toBe("/paths?oneway=crit&sort=backward_loss");
    expect(rowNames()).toEqual(["dca → dcb", "dcb → dca"]);
    fireEvent.change(oneWay, { target: { value: "none" } });
    expect(rowNames()).toEqual(["dca → edge-1"]);
  });

  it("opens the view a link describes", async () => {
    renderPaths({}, "/paths?sort=age&q=dca");
    await screen.findByText("dca → dcb");
    expect(rowNames()).toEqual(["dca → edge-1", "dca → dcb", "dcb → dca"]);
    expect(screen.getByRole<HTMLInputElement>("searchbox", { name: /Agent/ }).value).toBe("dca");
  });

  it("shows 100 paths a page, asks for the sparklines of those only, and pages in the URL", async () => {
    const agents = Array.from({ length: 16 }, (_, index) => ({
      id: `00000000-0000-4000-8000-${String(index).padStart(12, "0")}`,
      name: `agent-${String(index).padStart(2, "0")}`,
    }));
    const many = agents.flatMap((source) =>
      agents.filter((destination) => destination !== source).map((destination) => summary(source, destination)),
    );
    expect(many).toHaveLength(240);
    const fetchMock = renderPaths({ "/api/v1/analysis/paths/": pathList(many) });
    await screen.findByText("agent-00 → agent-01");
    expect(screen.getAllByTestId("path-range")[0]?.textContent).toBe("1–100 of 240");
    expect(rowNames()).toHaveLength(100);
    await waitFor(() => {
      expect(sparkPairs(fetchMock).flat()).toHaveLength(100);
    });
    // Requests short enough for gunicorn's request line limit.
    expect(sparkPairs(fetchMock).map((pairs) => pairs.length)).toEqual([40, 40, 20]);

    fireEvent.click(screen.getAllByText("Next →")[0] as HTMLElement);
    expect(where()).toBe("/paths?page=2");
    expect(screen.getAllByTestId("path-range")[0]?.textContent).toBe("101–200 of 240");
    expect(rowNames()[0]).toBe("agent-06 → agent-11");
    await waitFor(() => {
      expect(sparkPairs(fetchMock).flat()).toHaveLength(200);
    });

    // A filter starts again from the first page.
    fireEvent.change(screen.getByRole("searchbox", { name: /Agent/ }), { target: { value: "agent-15" } });
    expect(where()).toBe("/paths?q=agent-15");
    expect(screen.getByTestId("path-range").textContent).toBe("1–30 of 30 matching");
    expect(screen.queryByText("Next →")).toBeNull();
  });

  it("shows the last page for a page number past the end", async () => {
    renderPaths({}, "/paths?page=9");
    await screen.findByText("dca → dcb");
    expect(screen.getByTestId("path-range").textContent).toBe("1–3 of 3");
  });
});
