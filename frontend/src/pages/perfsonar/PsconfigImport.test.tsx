import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { PsconfigImportReport } from "../../api/perfsonar";
import type { Mesh } from "../../api/queries";
import type { Role } from "../../lib/roles";
import { mockApi, reply, requests, type ApiRoutes, type MockRequest } from "../../test/mockApi";
import { meAs, renderWithProviders, sessionRoutes } from "../../test/render";
import { MeshesPage } from "../MeshesPage";

const MESHES: Mesh[] = [
  { name: "backbone", kind: "mesh", members: [], tests: [], psconfig_published: true },
  { name: "edge", kind: "mesh", members: [], tests: [] },
];

const TEMPLATE = {
  addresses: { "host-a": { address: "host-a.perfsonar.net" }, "host-b": { address: "host-b.perfsonar.net" } },
  groups: { g: { type: "mesh", addresses: [{ name: "host-a" }, { name: "host-b" }] } },
  tests: { thr: { type: "throughput", spec: { source: "{% address[0] %}", dest: "{% address[1] %}" } } },
  tasks: { "thr-mesh": { group: "g", test: "thr" } },
};

function report(dryRun: boolean): PsconfigImportReport {
  return {
    dry_run: dryRun,
    meshes: [
      {
        name: "g",
        group: "g",
        action: "create",
        kind: "mesh",
        members: ["host-a", "host-b"],
        targets: [],
        tests: [{ name: "thr", test_type: "throughput", interval_s: 21_600, slip_s: 3600, enabled: true }],
      },
      { name: "old", group: "old", action: "unchanged", kind: "disjoint", members: [], targets: [], tests: [] },
    ],
    nodes: [
      { name: "host-a", address: "host-a.perfsonar.net", action: "matched", element: "addresses.host-a" },
      { name: "host-b", address: "host-b.perfsonar.net", action: "unknown", element: "addresses.host-b" },
    ],
    unmapped: [
      { element: "tests.lat.spec.bucket-width", reason: "Fathom's latency test keeps no histogram; left out" },
      { element: "archives.example-archive-central", reason: "Fathom archives its own results; kept out" },
    ],
    address_classes: [],
  };
}

function routes(role: Role, overrides: ApiRoutes = {}): ApiRoutes {
  return { ...sessionRoutes(role), "/api/v1/meshes/": MESHES, ...overrides };
}

function chooseFile(text: string, name = "mesh.json") {
  const input = screen.getByLabelText("Template file");
  fireEvent.change(input, { target: { files: [new File([text], name, { type: "application/json" })] } });
}

async function openImport(role: Role, overrides: ApiRoutes = {}) {
  const fetchMock = mockApi(routes(role, overrides));
  renderWithProviders(<MeshesPage />, "/meshes", meAs(role));
  fireEvent.click(await screen.findByRole("button", { name: "Import pSConfig" }));
  return fetchMock;
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe("Meshes page: pSConfig", () => {
  it("links every mesh's pSConfig template and marks published ones", async () => {
    mockApi(routes("viewer"));
    renderWithProviders(<MeshesPage />, "/meshes", meAs("viewer"));
    const backbone = (await screen.findByText("backbone")).closest("tr");
    if (backbone === null) {
      throw new Error("no row for backbone");
    }
    const link = within(backbone).getByRole("link", { name: "pSConfig" });
    expect(link.getAttribute("href")).toBe("/api/v1/perfsonar/psconfig/backbone.json");
    expect(link.getAttribute("download")).toBe("backbone.json");
    expect(within(backbone).getByText("· published")).toBeDefined();
    expect(screen.getByText("edge").closest("tr")?.textContent).not.toContain("published");
  });

  it("offers a viewer no import", async () => {
    mockApi(routes("viewer"));
    renderWithProviders(<MeshesPage />, "/meshes", meAs("viewer"));
    await screen.findByText("backbone");
    expect(screen.queryByRole("button", { name: "Import pSConfig" })).toBeNull();
  });

  it("dry-runs a template file and shows the whole report", async () => {
    const fetchMock = await openImport("operator", {
      "POST /api/v1/perfsonar/psconfig/import/": ({ body }: MockRequest) => report((body as { dry_run: boolean }).dry_run),
    });
    const dryRun = screen.getByRole<HTMLButtonElement>("button", { name: "Dry run" });
    expect(dryRun.disabled).toBe(true);
    chooseFile(JSON.stringify(TEMPLATE));
    await waitFor(() => {
      expect(dryRun.disabled).toBe(false);
    });
    fireEvent.click(dryRun);

    const shown = await screen.findByRole("region", { name: "Import report" });
    expect(within(shown).getByText("Dry run: nothing was changed")).toBeDefined();
    expect(within(shown).getByRole("status").textContent).toBe(
      "meshes: 1 to create, 1 unchanged; hosts: 1 matched, 1 unknown; 2 elements not mapped.",
    );
    const mesh = within(shown).getByText("g").closest("tr");
    expect(mesh?.textContent).toContain("to create");
    expect(mesh?.textContent).toContain("host-a, host-b");
    expect(mesh?.textContent).toContain("every 6 h, slip 1 h");
    expect(within(shown).getByText("unknown: left out")).toBeDefined();
    expect(within(shown).getByText("tests.lat.spec.bucket-width")).toBeDefined();
    expect(within(shown).getByText(/keeps no histogram/)).toBeDefined();
    expect(within(shown).getByText(/Fathom archives its own results/)).toBeDefined();

    expect(requests(fetchMock, "/api/v1/perfsonar/psconfig/import/", "POST")[0]?.body).toEqual({
      template: TEMPLATE,
      register_unknown: false,
      dry_run: true,
    });

    // Import applies it, registering unknown hosts when asked.
    fireEvent.click(screen.getByLabelText("Register unknown hosts as perfSONAR nodes"));
    expect(screen.queryByRole("region", { name: "Import report" })).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Import" }));
    expect(await screen.findByText("Imported")).toBeDefined();
    expect(screen.getByText("created")).toBeDefined();
    expect(requests(fetchMock, "/api/v1/perfsonar/psconfig/import/", "POST")[1]?.body).toEqual({
      template: TEMPLATE,
      register_unknown: true,
      dry_run: false,
    });
  });

  it("says a file that is not JSON is not, and sends nothing", async () => {
    const fetchMock = await openImport("operator");
    chooseFile("addresses:\n  host-a: {}\n", "mesh.yaml");
    const message = await screen.findByText(/^mesh\.yaml is not JSON/);
    expect(message.closest(".field")?.textContent).toContain("Template file");
    expect(screen.getByRole<HTMLButtonElement>("button", { name: "Dry run" }).disabled).toBe(true);
    expect(screen.getByRole<HTMLButtonElement>("button", { name: "Import" }).disabled).toBe(true);
    expect(requests(fetchMock, "/api/v1/perfsonar/psconfig/import/")).toHaveLength(0);
  });

  it("imports from a URL and shows the server's complaint beside it", async () => {
    const fetchMock = await openImport("operator", {
      "POST /api/v1/perfsonar/psconfig/import/": reply(400, { url: ["could not fetch it: HTTP 404"] }),
    });
    fireEvent.click(screen.getByLabelText("A URL"));
    fireEvent.change(screen.getByLabelText("Template URL"), { target: { value: " https://ps.example.net/psconfig/m.json " } });
    fireEvent.click(screen.getByRole("button", { name: "Dry run" }));
    const message = await screen.findByText("could not fetch it: HTTP 404");
    expect(message.closest(".field")?.textContent).toContain("Template URL");
    expect(requests(fetchMock, "/api/v1/perfsonar/psconfig/import/", "POST")[0]?.body).toEqual({
      url: "https://ps.example.net/psconfig/m.json",
      register_unknown: false,
      dry_run: true,
    });
  });

  it("shows a template the server refuses as a whole above the buttons", async () => {
    await openImport("operator", {
      "POST /api/v1/perfsonar/psconfig/import/": reply(400, {
        template: { tasks: ["this field is required"] },
      }),
    });
    chooseFile(JSON.stringify({ addresses: {} }));
    await waitFor(() => {
      expect(screen.getByRole<HTMLButtonElement>("button", { name: "Dry run" }).disabled).toBe(false);
    });
    fireEvent.click(screen.getByRole("button", { name: "Dry run" }));
    expect(await screen.findByText("template.tasks: this field is required")).toBeDefined();
  });

  it("says when the import is too large for the server", async () => {
    await openImport("operator", {
      "POST /api/v1/perfsonar/psconfig/import/": reply(413, { detail: "the template is larger than 1 MB" }),
    });
    chooseFile(JSON.stringify(TEMPLATE));
    await waitFor(() => {
      expect(screen.getByRole<HTMLButtonElement>("button", { name: "Import" }).disabled).toBe(false);
    });
    fireEvent.click(screen.getByRole("button", { name: "Import" }));
    expect(await screen.findByText("the template is larger than 1 MB")).toBeDefined();
  });
});
