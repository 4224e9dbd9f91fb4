import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { Route, Routes } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { AuditEntry, Mesh, PlanPreview } from "../api/meshQueries";
import type { Agent } from "../api/queries";
import type { Role } from "../lib/roles";
import { mockApi, reply, requestedUrls, requests, type ApiRoutes } from "../test/mockApi";
import { renderWithProviders, sessionRoutes } from "../test/render";
import { MeshEditorPage } from "./MeshEditorPage";
import { MeshesPage } from "./MeshesPage";

const MESH: Mesh = {
  name: "backbone",
  description: "core sites",
  kind: "mesh",
  all_agents: false,
  unidirectional: false,
  targets: [],
  enabled: true,
  members: [
    { agent: "dca", side: "a" },
    { agent: "dcb", side: "a" },
  ],
  tests: [
    {
      name: "throughput",
      test_type: "throughput",
      spec: { duration_s: 20 },
      interval_s: 14_400,
      slip_s: 3600,
      enabled: true,
    },
  ],
};

function agent(name: string, extra: Partial<Agent> = {}): Agent {
  return {
    id: `00000000-0000-0000-0000-00000000000${name.length}`,
    name,
    address: `${name}.example.net`,
    status: { value: "online", label: "Online", color: "#1a7f37" },
    revoked_at: null,
    decommissioned_at: null,
    ...extra,
  };
}

const AGENTS: Agent[] = [
  agent("dca"),
  agent("dcb"),
  agent("old", { decommissioned_at: "2026-01-01T00:00:00Z" }),
];

const PREVIEW: PlanPreview = {
  ok: false,
  horizon_s: 86_400,
  agents: [
    { agent: "dca", slots: 6, exclusive_s: 270, demand_before: 0.05, demand: 0.125, overbooked: false },
    { agent: "dcb", slots: 6, exclusive_s: 270, demand_before: 0.9, demand: 1.3, overbooked: true },
  ],
  conflicts: [{ test: "throughput", source: "dca", destination: "dcb", reason: "dcb has no free time in the slip" }],
};

const HISTORY: AuditEntry[] = [
  {
    id: 41,
    at: "2026-02-01T10:00:00Z",
    actor_name: "olga",
    via: "session",
    action: "update",
    object_type: "mesh",
    object_key: "backbone",
    object_repr: "backbone",
    changes: { "tests.0.interval_s": [21_600, 14_400] },
  },
];

function routes(role: Role, preview: PlanPreview = { ...PREVIEW, ok: true, agents: PREVIEW.agents.slice(0, 1), conflicts: [] }): ApiRoutes {
  return {
    ...sessionRoutes(role),
    "/api/v1/agents/": AGENTS,
    "/api/v1/meshes/": [MESH],
    "/api/v1/meshes/backbone/": MESH,
    "/api/v1/meshes/backbone/history/": HISTORY,
    "/api/v1/meshes/preview/": preview,
    "/api/v1/meshes/backbone/revert/": MESH,
  };
}

function renderAt(path: string) {
  return renderWithProviders(
    <Routes>
      <Route path="/meshes" element={<MeshesPage />} />
      <Route path="/meshes/new" element={<MeshEditorPage />} />
      <Route path="/meshes/:name" element={<MeshEditorPage />} />
    </Routes>,
    path,
  );
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("MeshEditorPage", () => {
  it("shows a viewer the mesh read-only, with no edit controls", async () => {
    const fetchMock = mockApi(routes("viewer"));
    renderAt("/meshes/backbone");
    const name = await screen.findByLabelText("Mesh name");
    expect((name as HTMLInputElement).value).toBe("backbone");
    // Read-only through the disabled fieldset around the form.
    expect(name.matches(":disabled")).toBe(true);
    await screen.findByText("You can read this mesh; changing it needs the operator role.");
    expect(screen.queryByRole("button", { name: "Save mesh" })).toBeNull();
    expect(screen.queryByRole("button", { name: /delete/i })).toBeNull();
    expect(screen.queryByRole("button", { name: "Preview plan" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Add test" })).toBeNull();
    await screen.findByText("by olga");
    expect(screen.queryByRole("button", { name: "Revert this change" })).toBeNull();
    expect(requestedUrls(fetchMock, "/api/v1/meshes/preview/")).toHaveLength(0);
  });

  it("generates the options form from the contract, with defaults as placeholders", async () => {
    mockApi(routes("operator"));
    renderAt("/meshes/backbone");
    const test = await screen.findByRole("group", { name: "Test throughput" });
    const duration = within(test).getByLabelText<HTMLInputElement>("duration_s");
    expect(duration.value).toBe("20");
    expect(duration.max).toBe("300");
    const parallel = within(test).getByLabelText<HTMLInputElement>("parallel");
    expect(parallel.value).toBe("");
    expect(parallel.placeholder).toBe("1");
    expect(within(test).queryByLabelText("path_rtt_ms")).toBeNull();
    expect(within(test).getByText("= 4 h")).toBeDefined();
    fireEvent.change(duration, { target: { value: "900" } });
    expect(within(test).getByText("must be at most 300")).toBeDefined();
  });

  it("shows an operator the plan preview and blocks an overbooking save", async () => {
    const fetchMock = mockApi(routes("operator", PREVIEW));
    renderAt("/meshes/backbone");
    await screen.findByLabelText("Mesh name");
    fireEvent.click(screen.getByRole("button", { name: "Preview plan" }));
    const preview = await screen.findByTestId("plan-preview");
    const dcb = within(preview).getByText("dcb").closest("tr");
    if (dcb === null) {
      throw new Error("no row for dcb");
    }
    expect(dcb.className).toBe("over-demand");
    expect(within(dcb).getByText("90 % → 130 %")).toBeDefined();
    expect(within(dcb).getByText("overbooked")).toBeDefined();
    expect(within(preview).getByText(/dcb has no free time in the slip/)).toBeDefined();
    expect(within(preview).getByRole("alert").textContent).toContain("This change overbooks dcb");
    const save = screen.getByRole<HTMLButtonElement>("button", { name: "Save mesh" });
    expect(save.disabled).toBe(true);
    expect(screen.getByText(/Save is disabled: the preview shows this change overbooks an agent/)).toBeDefined();

    expect(requests(fetchMock, "/api/v1/meshes/preview/", "POST")[0]?.body).toMatchObject({
      replaces: "backbone",
      mesh: { name: "backbone" },
    });
  });

  it("previews by itself a moment after an edit", async () => {
    const fetchMock = mockApi(routes("operator"));
    renderAt("/meshes/backbone");
    const interval = await screen.findByLabelText("Interval (s)");
    fireEvent.change(interval, { target: { value: "21600" } });
    await waitFor(() => {
      expect(requestedUrls(fetchMock, "/api/v1/meshes/preview/").length).toBeGreaterThan(0);
    });
    expect(await screen.findByText("The plan fits: no agent is overbooked.")).toBeDefined();
    expect(screen.getByText("5 % → 13 %")).toBeDefined();
  });

  it("shows the server's field errors beside their fields", async () => {
    const refusal = { tests: [{ spec: { duration_s: ["longer than the server allows"] } }], members: [{}, { agent: ["gone"] }] };
    const fetchMock = mockApi({ ...routes("operator"), "PUT /api/v1/meshes/backbone/": reply(400, refusal) });
    renderAt("/meshes/backbone");
    fireEvent.change(await screen.findByLabelText("Description"), { target: { value: "core" } });
    fireEvent.click(screen.getByRole("button", { name: "Save mesh" }));
    const test = screen.getByRole("group", { name: "Test throughput" });
    expect(await within(test).findByText("longer than the server allows")).toBeDefined();
    expect(screen.getByText("gone")).toBeDefined();
    expect(screen.getByText("The server refused the mesh.")).toBeDefined();
    // An existing mesh is saved whole, with PUT.
    expect(requests(fetchMock, "/api/v1/meshes/backbone/", "PUT")[0]?.body).toMatchObject({
      name: "backbone",
      description: "core",
      members: [{ agent: "dca" }, { agent: "dcb" }],
    });
  });

  it("asks before reverting a change", async () => {
    const fetchMock = mockApi(routes("operator"));
    renderAt("/meshes/backbone");
    fireEvent.click(await screen.findByRole("button", { name: "Revert this change" }));
    fireEvent.click(screen.getByRole("button", { name: "Confirm revert" }));
    await waitFor(() => {
      expect(requestedUrls(fetchMock, "/api/v1/meshes/backbone/revert/")).toHaveLength(1);
    });
    expect(await screen.findByText(/Reverted the update of 2026-02-01 10:00:00 UTC by olga/)).toBeDefined();
  });

  it("creates a mesh and lands on it with a notice", async () => {
    const fetchMock = mockApi({
      ...routes("operator"),
      "POST /api/v1/meshes/": reply(201, { ...MESH, name: "lab" }),
      "/api/v1/meshes/lab/history/": [],
    });
    renderAt("/meshes/new");
    fireEvent.change(await screen.findByLabelText("Mesh name"), { target: { value: "lab" } });
    fireEvent.click(await screen.findByLabelText("dca"));
    fireEvent.click(screen.getByRole("button", { name: "Save mesh" }));
    expect(await screen.findByText(/Mesh lab saved/)).toBeDefined();
    expect(screen.getByRole("heading", { name: "Mesh lab" })).toBeDefined();
    expect(requests(fetchMock, "/api/v1/meshes/", "POST")[0]?.body).toMatchObject({
      name: "lab",
      kind: "mesh",
      members: [{ agent: "dca", side: "a" }],
      tests: [{ name: "ping", test_type: "ping", interval_s: 300, slip_s: 0, spec: {} }],
    });
  });

  it("deletes only once the name is typed", async () => {
    const fetchMock = mockApi(routes("operator"));
    renderAt("/meshes/backbone");
    fireEvent.click(await screen.findByRole("button", { name: "Delete this mesh…" }));
    const confirm = screen.getByRole<HTMLButtonElement>("button", { name: "Delete mesh" });
    expect(confirm.disabled).toBe(true);
    fireEvent.change(screen.getByLabelText("Type the name of the mesh to confirm"), { target: { value: "backbone" } });
    expect(confirm.disabled).toBe(false);
    fireEvent.click(confirm);
    expect(await screen.findByText("Mesh backbone deleted.")).toBeDefined();
    expect(requests(fetchMock, "/api/v1/meshes/backbone/", "DELETE")).toHaveLength(1);
  });

  it("offers members from the active agents only", async () => {
    mockApi(routes("operator"));
    renderAt("/meshes/new");
    expect(await screen.findByLabelText("dca")).toBeDefined();
    expect(screen.queryByLabelText("old")).toBeNull();
    expect(screen.getByRole("heading", { name: "New mesh" })).toBeDefined();
  });
});

describe("MeshesPage", () => {
  it("lists meshes and offers New mesh to operators only", async () => {
    mockApi(routes("operator"));
    renderAt("/meshes");
    expect(await screen.findByRole("link", { name: "backbone" })).toBeDefined();
    expect(screen.getByText("2 agents")).toBeDefined();
    expect(screen.getByText("every 4 h, slip 1 h")).toBeDefined();
    expect(await screen.findByRole("link", { name: "New mesh" })).toBeDefined();
  });

  it("gives viewers no New mesh", async () => {
    mockApi(routes("viewer"));
    renderAt("/meshes");
    await screen.findByRole("link", { name: "backbone" });
    await waitFor(() => {
      expect(screen.getByText(/A mesh says which agents/)).toBeDefined();
    });
    expect(screen.queryByRole("link", { name: "New mesh" })).toBeNull();
  });
});
