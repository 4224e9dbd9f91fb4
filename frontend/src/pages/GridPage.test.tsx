import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { MemoryRouter, Route, Routes, useLocation } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { GridCell, Mesh, MeshGrid } from "../api/queries";
import type { Role } from "../lib/roles";
import { CHOICES, GRID_THRESHOLDS, gridCell, type AgentRef } from "../test/analysisFixtures";
import { mockApi, reply, requestedUrls, type ApiRoutes, type MockRequest } from "../test/mockApi";
import { sessionRoutes } from "../test/render";
import { GridPage } from "./GridPage";

const A = { id: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", name: "dca" };
const B = { id: "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb", name: "dcb" };
const C = { id: "cccccccc-cccc-4ccc-8ccc-cccccccccccc", name: "dcc" };

const MESHES: Mesh[] = [
  { name: "lab", kind: "mesh", enabled: false },
  { name: "default", kind: "mesh", enabled: true, all_agents: true, thresholds: { rtt_warn_ms: 5 } },
];

function cell(source: AgentRef, destination: AgentRef, fields: Partial<GridCell> = {}): GridCell {
  return gridCell(source, destination, { loss_fraction: 0.001, open_findings: 2, ...fields });
}

const NOTHING: Partial<GridCell> = {
  rate_bps: null,
  ceiling_bps: null,
  fraction_of_ceiling: null,
  diagnosis: null,
  measured_at: null,
  loss_fraction: null,
  rtt_median_ms: null,
  mode_count: null,
  rtt_mode_verdict: null,
  open_findings: 0,
  last_run_status: null,
  last_run_test_type: null,
  last_run_at: null,
  data_age_s: null,
};

function meshGrid(mesh: string, agents: AgentRef[], cells: GridCell[]): MeshGrid {
  return { mesh, agents, cells, thresholds: GRID_THRESHOLDS, generated_at: "2026-11-22T12:10:00Z" };
}

const GRID = meshGrid("default", [A, B, C], [
  cell(A, B),
  // Nothing measured yet: every value unknown.
  cell(B, A, NOTHING),
  // Silent for five hours: stale, with its age.
  cell(A, C, { stale: true, data_age_s: 5 * 3600, last_run_at: "2026-11-22T07:10:00Z" }),
  cell(C, A, { last_run_status: "failed", rtt_median_ms: 140 }),
]);

function PathPageStub() {
  const location = useLocation();
  return <p>path page {location.pathname + location.search}</p>;
}

function renderGrid(overrides: ApiRoutes = {}, entry = "/grid", role: Role | null = null) {
  const fetchMock = mockApi({
    ...(role === null ? {} : sessionRoutes(role)),
    "/api/v1/choices/": CHOICES,
    "/api/v1/meshes/": MESHES,
    "/api/v1/analysis/meshes/default/grid/": GRID,
    "/api/v1/analysis/meshes/lab/grid/": meshGrid("lab", [], []),
    ...overrides,
  });
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[entry]}>
        <Routes>
          <Route path="/grid" element={<GridPage />} />
          <Route path="/paths/:source/:destination" element={<PathPageStub />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return fetchMock;
}

function linkFor(source: AgentRef, destination: AgentRef): HTMLElement {
  const prefix = `/paths/${source.id}/${destination.id}`;
  const links = screen.getAllByRole("link").filter((item) => item.getAttribute("href")?.startsWith(prefix));
  if (links[0] === undefined) {
    throw new Error(`no link to ${prefix}`);
  }
  return links[0];
}

function metricPicker(): HTMLSelectElement {
  return screen.getByRole<HTMLSelectElement>("combobox", { name: /Metric/ });
}

describe("GridPage", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("opens on the first enabled mesh with both directions in each cell, linked to the path at that time", async () => {
    const fetchMock = renderGrid();
    await screen.findAllByText("97%");
    expect(requestedUrls(fetchMock, "/api/v1/analysis/meshes/default/grid/")).toHaveLength(1);
    expect(requestedUrls(fetchMock, "/api/v1/analysis/meshes/lab/grid/")).toHaveLength(0);
    expect(screen.getByRole<HTMLSelectElement>("combobox", { name: /Mesh/ }).value).toBe("default");
    expect(metricPicker().value).toBe("fraction");

    const measured = linkFor(A, B);
    expect(measured.getAttribute("href")).toBe(
      `/paths/${A.id}/${B.id}?from=2026-11-21T12%3A05%3A00.000Z&to=2026-11-22T12%3A05%3A00Z`,
    );
    expect(measured.className).toContain("tone-good");
    expect(within(measured).getByLabelText("2 open findings")).toBeDefined();
    // The tooltip is built when the pointer reaches the cell.
    expect(measured.getAttribute("title")).toBeNull();
    fireEvent.mouseOver(measured);
    expect(measured.getAttribute("title")).toContain("diagnosis: Receive window limited");

    // Row dca, column dcb: dca -> dcb on top, dcb -> dca under it.
    const square = measured.closest("td");
    const halves = square === null ? [] : within(square).getAllByRole("link");
    expect(halves.map((half) => half.getAttribute("href")?.split("?")[0])).toEqual([
      `/paths/${A.id}/${B.id}`,
      `/paths/${B.id}/${A.id}`,
    ]);
    expect(halves[1]?.textContent).toBe("←–");
    expect(halves[1]?.className).toContain("tone-none");
    expect(halves[1]?.getAttribute("href")).toBe(`/paths/${B.id}/${A.id}`);

    const stale = linkFor(A, C);
    expect(stale.textContent).toContain("5h");
    expect(stale.className).toContain("tone-stale");
    fireEvent.focus(stale);
    expect(stale.getAttribute("title")).toContain("STALE");

    const headers = screen.getAllByRole("columnheader").map((header) => header.textContent);
    expect(headers).toEqual(["source ↓ destination →", "dca", "dcb", "dcc"]);
    expect(screen.getAllByRole("rowheader").map((header) => header.textContent)).toEqual(["dca", "dcb", "dcc"]);
  });

  it("switches metric, keeps it in the URL and colours by the thresholds", async () => {
    renderGrid({}, "/grid?metric=status");
    await screen.findAllByText("ok");
    expect(metricPicker().value).toBe("status");
    expect(linkFor(C, A).textContent).toContain("failed");
    expect(linkFor(C, A).className).toContain("tone-bad");

    fireEvent.change(metricPicker(), { target: { value: "rtt" } });
    await waitFor(() => {
      expect(linkFor(C, A).textContent).toContain("140");
    });
    expect(linkFor(C, A).className).toContain("tone-warn");
    expect(linkFor(A, B).textContent).toContain("7.9");
    expect(screen.getByText("from 250 ms")).toBeDefined();

    // ECMP is marked whatever the metric (the lab's browser test counts the markers).
    const marker = within(linkFor(A, B)).getByTestId("ecmp-marker");
    expect(marker.getAttribute("aria-label")).toBe("Bimodal RTT (ECMP)");
    expect(marker.style.color).toBe("rgb(188, 76, 0)");
    fireEvent.change(metricPicker(), { target: { value: "modes" } });
    await waitFor(() => {
      expect(linkFor(A, B).textContent).toBe("→2⇉!2");
    });
  });

  it("shows each direction's one-way loss, and no data where no latency test runs", async () => {
    const oneWay = meshGrid("default", [A, B, C], [
      cell(A, B, { forward_loss_fraction: 0.02 }),
      cell(B, A, { forward_loss_fraction: 0 }),
      cell(A, C, { forward_loss_fraction: null }),
    ]);
    renderGrid({ "/api/v1/analysis/meshes/default/grid/": oneWay }, "/grid?metric=one_way_loss");
    await waitFor(() => {
      expect(linkFor(A, B).textContent).toContain("2%");
    });
    expect(metricPicker().value).toBe("one_way_loss");
    expect(linkFor(A, B).className).toContain("tone-bad");
    expect(linkFor(B, A).textContent).toContain("0%");
    expect(linkFor(B, A).className).toContain("tone-good");
    expect(linkFor(A, C).className).toContain("tone-none");
    expect(screen.getByText("from 1.00 %")).toBeDefined();
    expect(screen.getByText("no data: no unloaded latency interval")).toBeDefined();
    fireEvent.mouseOver(linkFor(A, B));
    expect(linkFor(A, B).getAttribute("title")).toContain("last hour: one-way loss 2.00 % (latency test, unloaded)");
  });

  it("opens the path page inside the app when a cell is clicked", async () => {
    renderGrid();
    await screen.findAllByText("97%");
    fireEvent.click(linkFor(A, B));
    expect(await screen.findByText(/^path page \/paths\/aaaa.*\?from=2026-11-21T12%3A05/)).toBeDefined();
  });

  it("switches mesh from the picker and explains a mesh without pairs", async () => {
    const fetchMock = renderGrid();
    await screen.findAllByText("97%");
    fireEvent.change(screen.getByRole("combobox", { name: /Mesh/ }), { target: { value: "lab" } });
    const explained = await screen.findByText(/The mesh “lab” has no pairs yet: it needs at least two active agents/);
    expect(explained).toBeDefined();
    expect(requestedUrls(fetchMock, "/api/v1/analysis/meshes/lab/grid/")).toHaveLength(1);
  });

  it("names the only agent of a one-agent mesh", async () => {
    renderGrid({ "/api/v1/analysis/meshes/lab/grid/": meshGrid("lab", [A], []) }, "/grid?mesh=lab");
    expect(await screen.findByText(/its only agent, dca, has nobody to test with/)).toBeDefined();
    expect(screen.queryByRole("table")).toBeNull();
  });

  it("says what to do without meshes", async () => {
    renderGrid({ "/api/v1/meshes/": [] });
    expect(await screen.findByText(/No meshes, so there is no grid/)).toBeDefined();
  });

  it("reports a failed grid inside its panel", async () => {
    renderGrid({ "/api/v1/analysis/meshes/default/grid/": 500 });
    expect(await screen.findByText("Could not load the grid of default: server error.")).toBeDefined();
    expect(screen.getByRole("combobox", { name: /Mesh/ })).toBeDefined();
  });

  it("offers viewers no thresholds form", async () => {
    renderGrid({}, "/grid", "viewer");
    await screen.findAllByText("97%");
    expect(screen.queryByText("Thresholds")).toBeNull();
  });

  it("lets an operator set thresholds, in their units, and shows the server's complaint", async () => {
    const patches: unknown[] = [];
    const fetchMock = renderGrid(
      {
        "PATCH /api/v1/meshes/default/": (request: MockRequest) => {
          patches.push(request.body);
          return patches.length === 1
            ? reply(400, { thresholds: { fraction_bad: ["must be below fraction_good (0.9); it is 0.95"] } })
            : { ...MESHES[1], thresholds: (request.body as { thresholds: unknown }).thresholds };
        },
      },
      "/grid",
      "operator",
    );
    fireEvent.click(await screen.findByText("Thresholds"));
    const form = screen.getByRole("form", { name: "Grid thresholds of default" });
    const warn = within(form).getByLabelText<HTMLInputElement>("RTT median: warn from (ms)");
    expect(warn.value).toBe("5");
    const bad = within(form).getByLabelText<HTMLInputElement>("Throughput / ceiling: bad at or under (%)");
    expect(bad.placeholder).toBe("50");
    fireEvent.change(bad, { target: { value: "95" } });
    fireEvent.click(within(form).getByRole("button", { name: "Save thresholds" }));
    expect(await within(form).findByText("must be below fraction_good (0.9); it is 0.95")).toBeDefined();

    fireEvent.change(bad, { target: { value: "40" } });
    fireEvent.click(within(form).getByRole("button", { name: "Save thresholds" }));
    expect(await within(form).findByText("Saved.")).toBeDefined();
    expect(patches).toEqual([
      { thresholds: { fraction_bad: 0.95, rtt_warn_ms: 5 } },
      { thresholds: { fraction_bad: 0.4, rtt_warn_ms: 5 } },
    ]);
    // The grid is read again with the thresholds now in force.
    await waitFor(() => {
      expect(requestedUrls(fetchMock, "/api/v1/analysis/meshes/default/grid/").length).toBeGreaterThan(1);
    });
  });
});
