import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { AgentKind, PerfsonarNode, PerfsonarTask } from "../../api/perfsonar";
import type { Agent } from "../../api/queries";
import type { Role } from "../../lib/roles";
import { mockApi, reply, requests, type ApiRoutes, type MockRequest } from "../../test/mockApi";
import { meAs, renderWithProviders, sessionRoutes } from "../../test/render";
import { AgentsPage } from "../AgentsPage";
import { nodeFixture } from "./testFixtures";

function agent(name: string, kind: AgentKind, extra: Partial<Agent> = {}): Agent {
  return {
    id: `id-${name}`,
    name,
    kind,
    address: "198.18.1.2",
    status: { value: "online", label: "Online", color: "#1a7f37" },
    last_seen_at: new Date(Date.now() - 60_000).toISOString(),
    agent_version: "1.4.0",
    ...extra,
  };
}

const PINNED = "3fa2b1c4d5e6f708192a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4c5d6e9e0d";

const NODES: PerfsonarNode[] = [
  nodeFixture("ps-ams", { tls_mode: "pinned", pinned_sha256: PINNED }),
  nodeFixture("ps-lon", {
    reachable: false,
    clock_offset_s: -1.8,
    problems: ["unreachable: connection refused", "clock 1.8 s behind Fathom's"],
    tasks: { active: 0, refused: 2, unanswered: 1 },
  }),
];

const AGENTS: Agent[] = [agent("athens", "fathom"), agent("ps-ams", "perfsonar"), agent("ps-lon", "perfsonar")];

const TASKS: PerfsonarTask[] = [
  {
    id: "t1",
    test_type: "throughput",
    mesh: "default",
    test: "throughput",
    source_name: "ps-ams",
    destination_name: "athens",
    target: "198.18.1.2",
    url: "https://ps-ams.example.net/pscheduler/tasks/5f1c",
    state: "refused",
    reason: "Task forbidden by limits: throughput above 1G",
    starts_at: "2026-05-20T10:00:00Z",
    until: "2026-05-20T10:01:00Z",
    created_at: "2026-05-20T09:00:00Z",
    deleted_at: null,
  },
  {
    id: "t3",
    test_type: "trace",
    mesh: "default",
    test: "trace",
    source_name: "ps-ams",
    destination_name: null,
    target: "198.18.1.9",
    url: "",
    state: "unanswered",
    reason: "https://ps-ams.example.net/pscheduler is unreachable: read timed out",
    starts_at: "2026-05-20T10:00:00Z",
    until: "2026-05-20T16:00:00Z",
    created_at: "2026-05-20T09:00:00Z",
    deleted_at: null,
  },
  {
    id: "t2",
    test_type: "ping",
    mesh: null,
    test: null,
    source_name: "ps-ams",
    destination_name: null,
    target: "example.org",
    url: "https://ps-ams.example.net/pscheduler/tasks/77aa8f1e-0b2c-4d5e-8f90-123456789abc",
    state: "deleted",
    reason: "mesh changed",
    starts_at: "2026-05-19T10:00:00Z",
    until: "2026-05-20T10:00:00Z",
    created_at: "2026-05-19T09:00:00Z",
    deleted_at: "2026-05-19T12:00:00Z",
  },
];

const AGENT_KINDS = [
  { value: "fathom", label: "Fathom agent", color: "#0969da" },
  { value: "perfsonar", label: "perfSONAR node", color: "#bf3989" },
];

function routes(role: Role, overrides: ApiRoutes = {}): ApiRoutes {
  return {
    ...sessionRoutes(role, { agent_kind: AGENT_KINDS }),
    "/api/v1/agents/": AGENTS,
    "/api/v1/enrollment-tokens/": [],
    "/api/v1/perfsonar/nodes/": NODES,
    "/api/v1/perfsonar/nodes/ps-ams/tasks/": TASKS,
    ...overrides,
  };
}

function rowOf(name: string): HTMLElement {
  const row = screen.getByText(name, { selector: "strong" }).closest("tr");
  if (row === null) {
    throw new Error(`no row for ${name}`);
  }
  return row;
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe("AgentsPage with perfSONAR nodes", () => {
  it("lists nodes beside agents with their kind, reachability and problems", async () => {
    mockApi(routes("viewer"));
    renderWithProviders(<AgentsPage />, "/agents", meAs("viewer"));
    await screen.findByText("ps-lon", { selector: "strong" });
    // The kind as the server labels and colours it.
    expect(within(rowOf("athens")).getByText("Fathom agent").getAttribute("data-status")).toBe("fathom");
    expect(within(rowOf("ps-ams")).getByText("perfSONAR node").style.backgroundColor).toBe("rgb(191, 57, 137)");
    expect(within(rowOf("ps-ams")).getByText("reachable")).toBeDefined();
    expect(within(rowOf("ps-ams")).getByText("API level 5")).toBeDefined();

    // The unreachable node comes first, flagged, its clock in red and its problems right below it.
    const lon = rowOf("ps-lon");
    expect(screen.getAllByRole("row")[1]).toBe(lon);
    expect(lon.className).toBe("agent-offline");
    expect(within(lon).getByText("unreachable")).toBeDefined();
    expect(within(lon).getByTestId("clock-offset").className).toBe("flag");
    const problems = lon.nextElementSibling as HTMLElement;
    expect(problems.className).toContain("node-problems");
    expect(within(problems).getByText("unreachable: connection refused")).toBeDefined();
    expect(within(problems).getByText("clock 1.8 s behind Fathom's")).toBeDefined();
    // Its task whose POST got no answer is counted apart, on the button and in its details.
    expect(within(lon).getByRole("button", { name: "Tasks (0 + 1 unanswered)" })).toBeDefined();
    fireEvent.click(within(lon).getByRole("button", { name: "Show node" }));
    const counts = screen.getByText("2 refused", { exact: false }).closest("dd") as HTMLElement;
    expect(within(counts).getByText("· 1 unanswered", { exact: false }).getAttribute("data-state")).toBe("unanswered");
    expect(screen.getByRole("status").textContent).toContain("2 perfSONAR nodes (1 unreachable)");
    expect(screen.getByRole("status").textContent).toContain("1 agents");
  });

  it("shows a node's details on demand: TLS with the fingerprint shortened, tests, tools, push and poll", async () => {
    mockApi(routes("viewer"));
    renderWithProviders(<AgentsPage />, "/agents", meAs("viewer"));
    await screen.findByText("ps-ams", { selector: "strong" });
    fireEvent.click(within(rowOf("ps-ams")).getByRole("button", { name: "Show node" }));
    const details = rowOf("ps-ams").nextElementSibling as HTMLElement;
    expect(within(details).getByText("https://ps-ams.example.net/pscheduler")).toBeDefined();
    expect(within(details).getByText("3fa2b1c4…9e0d").getAttribute("title")).toBe(PINNED);
    expect(within(details).getByText("Pinned SHA-256 fingerprint", { exact: false })).toBeDefined();
    expect(within(details).getByText("iperf3")).toBeDefined();
    expect(within(details).getByText("throughput")).toBeDefined();
    expect(within(details).getByText("+0.004 s").className).not.toBe("flag");
    expect(within(details).getByText("5 min ago")).toBeDefined();
    expect(within(details).getByText("never")).toBeDefined();
  });

  it("lets a viewer read tasks but gives no write controls", async () => {
    const fetchMock = mockApi(routes("viewer"));
    renderWithProviders(<AgentsPage />, "/agents", meAs("viewer"));
    await screen.findByText("ps-ams", { selector: "strong" });
    for (const action of ["Add perfSONAR node", "Check now", "Archive token", "Remove"]) {
      expect(screen.queryByRole("button", { name: action })).toBeNull();
    }
    fireEvent.click(within(rowOf("ps-ams")).getByRole("button", { name: "Tasks (3)" }));
    const tasks = await screen.findByRole("region", { name: "Tasks on ps-ams" });
    expect(within(tasks).getByText("Task forbidden by limits: throughput above 1G")).toBeDefined();
    expect(within(tasks).getByText("ps-ams → athens")).toBeDefined();
    const link = within(tasks).getByText("tasks/5f1c").closest("a");
    expect([link?.href, link?.title]).toEqual([
      "https://ps-ams.example.net/pscheduler/tasks/5f1c",
      "https://ps-ams.example.net/pscheduler/tasks/5f1c",
    ]);
    // A task whose POST got no answer: whether the node made it is not known yet.
    const unanswered = within(tasks).getByText("unanswered");
    expect(unanswered.getAttribute("data-state")).toBe("unanswered");
    expect(within(unanswered.closest("tr") as HTMLElement).getByText("unknown: asked on the next sync")).toBeDefined();
    // Deleted tasks only on demand.
    expect(within(tasks).queryByText("mesh changed")).toBeNull();
    fireEvent.click(within(tasks).getByLabelText(/Show deleted \(1\)/));
    expect(within(tasks).getByText("mesh changed")).toBeDefined();
    expect(within(tasks).getByText("ps-ams → example.org")).toBeDefined();
    expect(within(tasks).getByText("tasks/77aa8f1e…").closest("a")?.title).toContain("/tasks/77aa8f1e-0b2c-");
    expect(requests(fetchMock, "/api/v1/perfsonar/nodes/ps-ams/archive-token/")).toHaveLength(0);
  });

  it("checks a node now and shows what the check found", async () => {
    const fetchMock = mockApi(
      routes("operator", {
        "POST /api/v1/perfsonar/nodes/ps-lon/check/": nodeFixture("ps-lon", { api_level: 4 }),
      }),
    );
    renderWithProviders(<AgentsPage />, "/agents", meAs("operator"));
    await screen.findByText("ps-lon", { selector: "strong" });
    fireEvent.click(within(rowOf("ps-lon")).getByRole("button", { name: "Check now" }));
    await waitFor(() => {
      expect(within(rowOf("ps-lon")).getByText("reachable")).toBeDefined();
    });
    expect(within(rowOf("ps-lon")).getByText("API level 4")).toBeDefined();
    expect(screen.queryByText("unreachable: connection refused")).toBeNull();
    expect(requests(fetchMock, "/api/v1/perfsonar/nodes/ps-lon/check/", "POST")).toHaveLength(1);
  });

  it("says why a check was refused", async () => {
    mockApi(routes("operator", { "POST /api/v1/perfsonar/nodes/ps-lon/check/": reply(404, { detail: "No Node matches the given query." }) }));
    renderWithProviders(<AgentsPage />, "/agents", meAs("operator"));
    await screen.findByText("ps-lon", { selector: "strong" });
    fireEvent.click(within(rowOf("ps-lon")).getByRole("button", { name: "Check now" }));
    expect(await within(rowOf("ps-lon")).findByRole("alert")).toHaveProperty("textContent", "No Node matches the given query.");
  });

  it("removes a node only after confirming", async () => {
    const removing = nodeFixture("ps-ams", { removing_since: new Date().toISOString() });
    const fetchMock = mockApi(routes("operator", { "DELETE /api/v1/perfsonar/nodes/ps-ams/": reply(202, removing) }));
    renderWithProviders(<AgentsPage />, "/agents", meAs("operator"));
    await screen.findByText("ps-ams", { selector: "strong" });
    fireEvent.click(within(rowOf("ps-ams")).getByRole("button", { name: "Remove" }));
    expect(requests(fetchMock, "/api/v1/perfsonar/nodes/ps-ams/", "DELETE")).toHaveLength(0);
    const confirm = within(rowOf("ps-ams")).getByRole("group", { name: "Confirm: Remove" });
    expect(confirm.textContent).toContain("deletes its tasks from the node");
    fireEvent.click(within(confirm).getByRole("button", { name: "Remove" }));
    await waitFor(() => {
      expect(requests(fetchMock, "/api/v1/perfsonar/nodes/ps-ams/", "DELETE")).toHaveLength(1);
    });
  });

  it("shows a node whose tasks a worker is still deleting as being removed, with no actions", async () => {
    const removing = nodeFixture("ps-ams", { removing_since: new Date(Date.now() - 30_000).toISOString() });
    const decommissioned = agent("ps-ams", "perfsonar", { decommissioned_at: new Date().toISOString() });
    mockApi(
      routes("operator", {
        "/api/v1/agents/": [AGENTS[0], decommissioned, AGENTS[2]],
        "/api/v1/perfsonar/nodes/": [removing, NODES[1]],
      }),
    );
    renderWithProviders(<AgentsPage />, "/agents", meAs("operator"));
    await screen.findByText("ps-ams", { selector: "strong" });
    const row = rowOf("ps-ams");
    expect(within(row).getByRole("status").textContent).toBe("removing: deleting its tasks from the node (asked 30 s ago)");
    expect(within(row).queryByRole("button", { name: "Remove" })).toBeNull();
  });

  it("shows the archive token with copy buttons and rotates it only after confirming", async () => {
    const token = {
      token: "fps_abc.def",
      authorization: "Bearer fps_abc.def",
      archive_url: "https://fathom.example/api/v1/perfsonar/archive/",
    };
    const fetchMock = mockApi(
      routes("operator", {
        "GET /api/v1/perfsonar/nodes/ps-ams/archive-token/": token,
        "POST /api/v1/perfsonar/nodes/ps-ams/archive-token/": { ...token, token: "fps_new.xyz", authorization: "Bearer fps_new.xyz" },
      }),
    );
    renderWithProviders(<AgentsPage />, "/agents", meAs("operator"));
    await screen.findByText("ps-ams", { selector: "strong" });
    fireEvent.click(within(rowOf("ps-ams")).getByRole("button", { name: "Archive token" }));
    const panel = await screen.findByRole("region", { name: "Archive token of ps-ams" });
    expect(await within(panel).findByText("fps_abc.def")).toBeDefined();
    expect(within(panel).getByText("Bearer fps_abc.def")).toBeDefined();
    expect(within(panel).getByText("https://fathom.example/api/v1/perfsonar/archive/")).toBeDefined();
    expect(within(panel).getByRole("button", { name: "Copy token" })).toBeDefined();
    expect(within(panel).getByRole("button", { name: "Copy authorization header" })).toBeDefined();
    expect(within(panel).getByRole("button", { name: "Copy archive url" })).toBeDefined();
    const spec = JSON.parse(within(panel).getByText(/"archiver": "http"/).textContent) as {
      data: { _url: string; _headers: Record<string, string> };
    };
    expect(spec.data._url).toBe(token.archive_url);
    expect(spec.data._headers).toEqual({ Authorization: "Bearer fps_abc.def" });

    fireEvent.click(within(panel).getByRole("button", { name: "Rotate" }));
    expect(requests(fetchMock, "/api/v1/perfsonar/nodes/ps-ams/archive-token/", "POST")).toHaveLength(0);
    fireEvent.click(within(panel).getByRole("button", { name: "Rotate token" }));
    expect(await within(panel).findByText("fps_new.xyz")).toBeDefined();
    expect(requests(fetchMock, "/api/v1/perfsonar/nodes/ps-ams/archive-token/", "POST")).toHaveLength(1);
  });

  it("still lists the agents when the nodes cannot be loaded", async () => {
    mockApi(routes("viewer", { "/api/v1/perfsonar/nodes/": 500 }));
    renderWithProviders(<AgentsPage />, "/agents", meAs("viewer"));
    expect(await screen.findByText("Could not load the perfSONAR nodes: server error.")).toBeDefined();
    expect(screen.getByText("athens", { selector: "strong" })).toBeDefined();
  });
});

describe("Add perfSONAR node", () => {
  async function openForm(overrides: ApiRoutes) {
    const fetchMock = mockApi(routes("operator", overrides));
    renderWithProviders(<AgentsPage />, "/agents", meAs("operator"));
    fireEvent.click(await screen.findByRole("button", { name: "Add perfSONAR node" }));
    fireEvent.change(screen.getByLabelText("Name"), { target: { value: "ps-par" } });
    fireEvent.change(screen.getByLabelText("pScheduler API URL"), { target: { value: "https://ps.par.example/pscheduler" } });
    return fetchMock;
  }

  it("sends the fingerprint only for a pinned node (blank otherwise) and shows the server's complaint beside it", async () => {
    const fetchMock = await openForm({
      "POST /api/v1/perfsonar/nodes/": reply(400, { pinned_sha256: ["must be 64 hex digits"] }),
    });
    expect(screen.queryByLabelText("SHA-256 fingerprint")).toBeNull();
    fireEvent.change(screen.getByLabelText("TLS verification"), { target: { value: "pinned" } });
    fireEvent.change(screen.getByLabelText("SHA-256 fingerprint"), { target: { value: " 3f:a2 " } });
    fireEvent.click(screen.getByRole("button", { name: "Add node" }));
    const message = await screen.findByText("must be 64 hex digits");
    expect(message.closest(".field")?.textContent).toContain("SHA-256 fingerprint");
    expect(screen.getByLabelText("SHA-256 fingerprint").getAttribute("aria-invalid")).toBe("true");
    expect(requests(fetchMock, "/api/v1/perfsonar/nodes/", "POST")[0]?.body).toEqual({
      name: "ps-par",
      api_url: "https://ps.par.example/pscheduler",
      address: "",
      tls_mode: "pinned",
      ca_bundle: "",
      pinned_sha256: "3f:a2",
    });
  });

  it("takes a CA bundle as PEM, and says what the first check found", async () => {
    const fetchMock = await openForm({
      "POST /api/v1/perfsonar/nodes/": ({ body }: MockRequest) =>
        reply(
          201,
          nodeFixture((body as { name: string }).name, {
            reachable: false,
            tls_mode: "ca_bundle",
            has_ca_bundle: true,
            problems: ["TLS: certificate verify failed: unable to get local issuer certificate"],
          }),
        ),
    });
    fireEvent.change(screen.getByLabelText("Measurement address"), { target: { value: "198.18.9.9" } });
    fireEvent.change(screen.getByLabelText("TLS verification"), { target: { value: "ca_bundle" } });
    fireEvent.change(screen.getByLabelText("CA bundle"), { target: { value: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n" } });
    fireEvent.click(screen.getByRole("button", { name: "Add node" }));
    expect(await screen.findByText("TLS: certificate verify failed: unable to get local issuer certificate")).toBeDefined();
    expect(screen.getByText(/its first check found problems/)).toBeDefined();
    expect(screen.queryByRole("form", { name: "Add perfSONAR node" })).toBeNull();
    expect(requests(fetchMock, "/api/v1/perfsonar/nodes/", "POST")[0]?.body).toEqual({
      name: "ps-par",
      api_url: "https://ps.par.example/pscheduler",
      address: "198.18.9.9",
      tls_mode: "ca_bundle",
      ca_bundle: "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
      pinned_sha256: "",
    });
  });

  it("puts a complaint about no field above the form", async () => {
    await openForm({ "POST /api/v1/perfsonar/nodes/": reply(400, { non_field_errors: ["a node at this URL exists: ps-ams"] }) });
    fireEvent.click(screen.getByRole("button", { name: "Add node" }));
    expect(await screen.findByText("a node at this URL exists: ps-ams")).toBeDefined();
  });
});
