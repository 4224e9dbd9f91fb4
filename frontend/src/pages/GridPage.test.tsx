import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, within } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { GridCell, Mesh, MeshGrid } from "../api/queries";
import { CHOICES, gridCell, type AgentRef } from "../test/analysisFixtures";
import { mockApi, requestedUrls, type ApiRoutes } from "../test/mockApi";
import { GridPage } from "./GridPage";

const A = { id: "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", name: "dca" };
const B = { id: "bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb", name: "dcb" };

const MESHES: Mesh[] = [
  { name: "lab", kind: "mesh", enabled: false },
  { name: "default", kind: "mesh", enabled: true, all_agents: true },
];

function cell(source: AgentRef, destination: AgentRef, fields: Partial<GridCell> = {}): GridCell {
  return gridCell(source, destination, { loss_fraction: 0.001, open_findings: 2, ...fields });
}

const GRID: MeshGrid = {
  mesh: "default",
  agents: [A, B],
  cells: [
    cell(A, B),
    // Nothing measured yet: every value unknown.
    cell(B, A, {
      rate_bps: null,
      ceiling_bps: null,
      fraction_of_ceiling: null,
      diagnosis: null,
      measured_at: null,
      loss_fraction: null,
      mode_count: null,
      rtt_mode_verdict: null,
      open_findings: 0,
    }),
  ],
};

function renderGrid(overrides: ApiRoutes = {}, entry = "/grid") {
  const fetchMock = mockApi({
    "/api/v1/choices/": CHOICES,
    "/api/v1/meshes/": MESHES,
    "/api/v1/analysis/meshes/default/grid/": GRID,
    "/api/v1/analysis/meshes/lab/grid/": { mesh: "lab", agents: [], cells: [] },
    ...overrides,
  });
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[entry]}>
        <GridPage />
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return fetchMock;
}

function linkTo(href: string): HTMLElement {
  const link = screen.getAllByRole("link").find((item) => item.getAttribute("href") === href);
  if (link === undefined) {
    throw new Error(`no link to ${href}`);
  }
  return link;
}

describe("GridPage", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("opens on the first enabled mesh and draws a cell per pair that links to its path", async () => {
    const fetchMock = renderGrid();
    await screen.findByText("97 %");
    expect(requestedUrls(fetchMock, "/api/v1/analysis/meshes/default/grid/")).toHaveLength(1);
    expect(requestedUrls(fetchMock, "/api/v1/analysis/meshes/lab/grid/")).toHaveLength(0);
    expect(screen.getByRole<HTMLSelectElement>("combobox").value).toBe("default");

    const measured = linkTo(`/paths/${A.id}/${B.id}`);
    expect(measured.textContent).toContain("loss 0.10 %");
    expect(measured.textContent).toContain("2 modes");
    expect(measured.textContent).toContain("2 open");
    expect(measured.closest("td")?.style.backgroundColor).toBe("rgb(168, 221, 181)");
    const marker = within(measured).getByTestId("ecmp-marker");
    expect(marker.getAttribute("aria-label")).toBe("Bimodal RTT (ECMP)");
    expect(marker.style.color).toBe("rgb(188, 76, 0)");
    expect(measured.getAttribute("title")).toContain("diagnosis: Receive window limited");

    const unmeasured = linkTo(`/paths/${B.id}/${A.id}`);
    expect(unmeasured.textContent).toContain("no run");
    expect(unmeasured.textContent).toContain("loss –");
    expect(unmeasured.textContent).toContain("no sweep");
    expect(unmeasured.textContent).toContain("0 open");
    expect(unmeasured.closest("td")?.style.backgroundColor).toBe("rgb(230, 233, 238)");
    expect(within(unmeasured).queryByTestId("ecmp-marker")).toBeNull();

    // Rows are sources, columns destinations, from the response's agents.
    const headers = screen.getAllByRole("columnheader").map((header) => header.textContent);
    expect(headers).toEqual(["source ↓ destination →", "dca", "dcb"]);
    expect(screen.getAllByRole("rowheader").map((header) => header.textContent)).toEqual(["dca", "dcb"]);
  });

  it("switches mesh from the picker and explains a mesh without pairs", async () => {
    const fetchMock = renderGrid();
    await screen.findByText("97 %");
    fireEvent.change(screen.getByRole("combobox"), { target: { value: "lab" } });
    expect(await screen.findByText(/The mesh “lab” has no pairs yet/)).toBeDefined();
    expect(requestedUrls(fetchMock, "/api/v1/analysis/meshes/lab/grid/")).toHaveLength(1);
  });

  it("takes the mesh from the URL", async () => {
    renderGrid({}, "/grid?mesh=lab");
    expect(await screen.findByText(/The mesh “lab” has no pairs yet/)).toBeDefined();
  });

  it("says what to do without meshes", async () => {
    renderGrid({ "/api/v1/meshes/": [] });
    expect(await screen.findByText(/No meshes, so there is no grid/)).toBeDefined();
  });

  it("reports a failed grid inside its panel", async () => {
    renderGrid({ "/api/v1/analysis/meshes/default/grid/": 500 });
    expect(await screen.findByText("Could not load the grid of default: server error.")).toBeDefined();
    expect(screen.getByRole("combobox")).toBeDefined();
  });
});
