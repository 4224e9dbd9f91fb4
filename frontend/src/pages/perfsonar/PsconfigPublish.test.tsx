import { fireEvent, screen, waitFor } from "@testing-library/react";
import { Route, Routes } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { Mesh } from "../../api/queries";
import type { Role } from "../../lib/roles";
import { mockApi, reply, requests, type ApiRoutes, type MockRequest } from "../../test/mockApi";
import { meAs, renderWithProviders, sessionRoutes } from "../../test/render";
import { MeshEditorPage } from "../MeshEditorPage";
import { withoutPublishing } from "./PsconfigPublish";

const MESH: Mesh = {
  name: "backbone",
  description: "",
  kind: "mesh",
  all_agents: true,
  unidirectional: false,
  targets: [],
  enabled: true,
  members: [],
  tests: [],
  psconfig_published: false,
};

function routes(role: Role, overrides: ApiRoutes = {}): ApiRoutes {
  return {
    ...sessionRoutes(role),
    "/api/v1/agents/": [],
    "/api/v1/meshes/": [MESH],
    "GET /api/v1/meshes/backbone/": MESH,
    "/api/v1/meshes/backbone/history/": [],
    "/api/v1/meshes/preview/": { ok: true, horizon_s: 86_400, agents: [], conflicts: [] },
    ...overrides,
  };
}

function renderEditor(role: Role) {
  renderWithProviders(
    <Routes>
      <Route path="/meshes/:name" element={<MeshEditorPage />} />
    </Routes>,
    "/meshes/backbone",
    meAs(role),
  );
}

const PUBLIC_URL = `${window.location.origin}/psconfig/backbone.json`;

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe("PsconfigPublish", () => {
  it("publishes the mesh with a PATCH and shows its public URL", async () => {
    const fetchMock = mockApi(
      routes("operator", {
        "PATCH /api/v1/meshes/backbone/": ({ body }: MockRequest) => ({ ...MESH, ...(body as object) }),
      }),
    );
    renderEditor("operator");
    const box = await screen.findByLabelText<HTMLInputElement>("Publish as pSConfig template");
    expect(box.checked).toBe(false);
    expect(screen.queryByText(PUBLIC_URL)).toBeNull();
    expect(screen.getByRole("link", { name: "Download backbone as a pSConfig template" }).getAttribute("href")).toBe(
      "/api/v1/perfsonar/psconfig/backbone.json",
    );

    fireEvent.click(box);
    expect(await screen.findByText(PUBLIC_URL)).toBeDefined();
    expect(screen.getByText(`psconfig remote add --configure-archives ${PUBLIC_URL}`)).toBeDefined();
    expect(requests(fetchMock, "/api/v1/meshes/backbone/", "PATCH")[0]?.body).toEqual({ psconfig_published: true });
    await waitFor(() => {
      expect(box.disabled).toBe(false);
    });
    expect(box.checked).toBe(true);
    // Saved on its own, so not announced as a change made elsewhere under the form.
    expect(screen.queryByText(/This mesh changed on the server/)).toBeNull();
  });

  it("shows a refusal and leaves the box as the server has it", async () => {
    mockApi(
      routes("operator", {
        "PATCH /api/v1/meshes/backbone/": reply(400, { psconfig_published: ["list meshes cannot be published"] }),
      }),
    );
    renderEditor("operator");
    const box = await screen.findByLabelText<HTMLInputElement>("Publish as pSConfig template");
    fireEvent.click(box);
    expect(await screen.findByText("list meshes cannot be published")).toBeDefined();
    expect(box.checked).toBe(false);
    expect(box.getAttribute("aria-invalid")).toBe("true");
  });

  it("shows a viewer the state and the URL, but no switch to use", async () => {
    mockApi(routes("viewer", { "GET /api/v1/meshes/backbone/": { ...MESH, psconfig_published: true } }));
    renderEditor("viewer");
    const box = await screen.findByLabelText<HTMLInputElement>("Publish as pSConfig template");
    expect(box.checked).toBe(true);
    expect(box.disabled).toBe(true);
    expect(screen.getByText(PUBLIC_URL)).toBeDefined();
  });

  it("compares meshes without the switch", () => {
    expect(withoutPublishing({ ...MESH, psconfig_published: true })).toEqual(withoutPublishing(MESH));
    expect("psconfig_published" in withoutPublishing(MESH)).toBe(false);
  });
});
