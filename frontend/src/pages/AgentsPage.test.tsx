import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { EnrollmentToken } from "../api/agentQueries";
import type { Agent } from "../api/queries";
import { StatusBadge } from "../components/StatusBadge";
import { parseHostFacts } from "../lib/hostFacts";
import type { Role } from "../lib/roles";
import { mockApi, reply, requestedUrls, requests, type ApiRoutes, type MockRequest } from "../test/mockApi";
import { meAs, renderWithProviders, sessionRoutes } from "../test/render";
import { HostFactsPanel } from "./agents/HostFactsPanel";
import { AgentsPage } from "./AgentsPage";

describe("HostFactsPanel", () => {
  it("shows buffer sysctls in readable units", () => {
    const facts = parseHostFacts({
      kernel: "6.1.0",
      interfaces: [{ name: "eth0", mtu: 9000, speed_mbps: 10000, addresses: [] }],
      sysctls: { "net.ipv4.tcp_rmem": "4096 131072 6291456", "net.ipv4.tcp_congestion_control": "cubic" },
    });
    if (facts === null) {
      throw new Error("facts did not parse");
    }
    render(<HostFactsPanel facts={facts} collectedAt={null} />);
    expect(screen.getByText("(4 KiB / 128 KiB / 6 MiB)")).toBeDefined();
    expect(screen.getByText("10 Gbit/s")).toBeDefined();
    expect(screen.getByText("cubic")).toBeDefined();
    expect(screen.getByText("not installed")).toBeDefined();
    expect(screen.getByTestId("host-clock").textContent).toBe("unknown (not reported by this agent version)");
  });

  it.each([
    [{ synchronized: true, max_error_ms: 0.4, source: "kernel", readable: true }, "synchronized (±0.4 ms)", false],
    [
      { synchronized: false, max_error_ms: 16000, source: "kernel", readable: true },
      "not synchronized: one-way delays to and from this host are not trusted",
      true,
    ],
    [{ synchronized: true, max_error_ms: 0.001, source: "shared", readable: true }, "shared lab clock", false],
    [{ synchronized: false, max_error_ms: null, source: "kernel", readable: false }, "unknown (the agent could not read it)", false],
  ])("shows the clock %j as %j", (clock, text, warning) => {
    const facts = parseHostFacts({ clock });
    if (facts === null) {
      throw new Error("facts did not parse");
    }
    render(<HostFactsPanel facts={facts} collectedAt={null} />);
    const shown = screen.getByTestId("host-clock");
    expect(shown.textContent).toBe(text);
    expect(shown.classList.contains("flag")).toBe(warning);
  });
});

describe("StatusBadge", () => {
  it("uses the server's label and colour", () => {
    render(<StatusBadge choice={{ value: "offline", label: "Offline", color: "#d62728" }} />);
    const badge = screen.getByText("Offline");
    expect(badge.getAttribute("data-status")).toBe("offline");
    expect(badge.style.backgroundColor).toBe("rgb(214, 39, 40)");
  });
});

function agentFixture(name: string, status: string, extra: Partial<Agent> = {}): Agent {
  return {
    id: `id-${name}`,
    name,
    address: "198.18.1.2",
    status: { value: status, label: status.replace("_", " "), color: status === "offline" ? "#cf222e" : "#1a7f37" },
    last_seen_at: new Date(Date.now() - 60_000).toISOString(),
    agent_version: "1.4.0",
    ...extra,
  };
}

const AGENTS: Agent[] = [
  agentFixture("athens", "online"),
  agentFixture("berlin", "offline", { last_seen_at: new Date(Date.now() - 3 * 3600_000).toISOString() }),
  agentFixture("cairo", "decommissioned", { decommissioned_at: "2025-01-01T00:00:00Z", revoked_at: "2025-01-01T00:00:00Z" }),
];

const ENROLMENT_TOKENS: EnrollmentToken[] = [
  {
    id: 7,
    prefix: "fet_ab12",
    note: "rack 4",
    agent_name: "dublin",
    rekey: false,
    created_at: new Date().toISOString(),
    expires_at: new Date(Date.now() + 3600_000).toISOString(),
    used_at: null,
    used_by: "",
    revoked_at: null,
    state: { value: "active", label: "Active", color: "#1a7f37" },
  },
];

function agentRoutes(role: Role, overrides: ApiRoutes = {}): ApiRoutes {
  return {
    ...sessionRoutes(role),
    "/api/v1/agents/": AGENTS,
    "/api/v1/enrollment-tokens/": ENROLMENT_TOKENS,
    "/api/v1/perfsonar/nodes/": [],
    ...overrides,
  };
}

describe("AgentsPage", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("shows a viewer no controls at all, and does not ask for enrolment tokens", async () => {
    const fetchMock = mockApi(agentRoutes("viewer"));
    renderWithProviders(<AgentsPage />, "/agents", meAs("viewer"));
    expect(await screen.findByText("athens")).toBeDefined();
    expect(screen.queryByRole("button", { name: "Enrol an agent" })).toBeNull();
    for (const action of ["Rename", "Re-key", "Revoke", "Decommission"]) {
      expect(screen.queryByRole("button", { name: action })).toBeNull();
    }
    expect(screen.queryByRole("columnheader", { name: "Actions" })).toBeNull();
    expect(screen.queryByText("Enrolment tokens")).toBeNull();
    expect(requestedUrls(fetchMock, "/api/v1/enrollment-tokens/")).toHaveLength(0);
  });

  it("flags offline agents first and hides decommissioned ones behind a toggle", async () => {
    mockApi(agentRoutes("operator"));
    renderWithProviders(<AgentsPage />, "/agents", meAs("operator"));
    const berlin = await screen.findByText("berlin");
    const rows = screen.getAllByRole("row");
    expect(rows[1]?.textContent).toContain("berlin");
    expect(berlin.closest("tr")?.className).toBe("agent-offline");
    expect(screen.getByText("1 offline").className).toBe("flag");
    expect(screen.queryByText("cairo")).toBeNull();
    fireEvent.click(screen.getByLabelText(/Show decommissioned \(1\)/));
    expect(screen.getByText("cairo")).toBeDefined();
  });

  it("enrols an agent: the token once, with the command to run", async () => {
    const fetchMock = mockApi(
      agentRoutes("operator", {
        "POST /api/v1/enrollment-tokens/": ({ body }: MockRequest) =>
          reply(201, {
            id: 8,
            token: "fet_secret123",
            prefix: "fet_secr",
            note: "",
            agent_name: (body as { agent_name: string }).agent_name,
            rekey: false,
            created_at: new Date().toISOString(),
            expires_at: "2025-03-01T13:00:00Z",
          }),
      }),
    );
    renderWithProviders(<AgentsPage />, "/agents", meAs("operator"));
    fireEvent.click(await screen.findByRole("button", { name: "Enrol an agent" }));
    fireEvent.change(screen.getByLabelText("Agent name"), { target: { value: "dublin" } });
    fireEvent.change(screen.getByLabelText("Addresses"), { target: { value: "198.18.4.4" } });
    fireEvent.change(screen.getByLabelText("Valid for"), { target: { value: "86400" } });
    fireEvent.click(screen.getByRole("button", { name: "Create enrolment token" }));

    expect((await screen.findByTestId("once-secret")).textContent).toBe("fet_secret123");
    expect(
      screen.getByText(
        `fathom-agent enroll --server ${window.location.origin} --token fet_secret123 --name dublin --address 198.18.4.4`,
      ),
    ).toBeDefined();
    const [sent] = requests(fetchMock, "/api/v1/enrollment-tokens/", "POST");
    expect(sent?.body).toEqual({ agent_name: "dublin", expires_in_s: 86400, note: "", rekey: false });

    fireEvent.click(screen.getByRole("button", { name: "Done" }));
    expect(screen.queryByText("fet_secret123")).toBeNull();
  });

  it("shows the server's refusal beside the agent name", async () => {
    mockApi(
      agentRoutes("operator", {
        "POST /api/v1/enrollment-tokens/": reply(400, { agent_name: ["an agent named athens is already enrolled"] }),
      }),
    );
    renderWithProviders(<AgentsPage />, "/agents", meAs("operator"));
    fireEvent.click(await screen.findByRole("button", { name: "Enrol an agent" }));
    fireEvent.change(screen.getByLabelText("Agent name"), { target: { value: "athens" } });
    fireEvent.click(screen.getByRole("button", { name: "Create enrolment token" }));
    const message = await screen.findByText("an agent named athens is already enrolled");
    expect(message.closest(".field")?.textContent).toContain("Agent name");
    expect(screen.getByLabelText("Agent name").getAttribute("aria-invalid")).toBe("true");
  });

  it("revokes an agent only after confirming", async () => {
    const fetchMock = mockApi(
      agentRoutes("operator", { "POST /api/v1/agents/id-athens/revoke/": { ...AGENTS[0], status: { value: "revoked", label: "Revoked", color: "#000" } } }),
    );
    renderWithProviders(<AgentsPage />, "/agents", meAs("operator"));
    const row = (await screen.findByText("athens")).closest("tr");
    if (row === null) {
      throw new Error("no row for athens");
    }
    fireEvent.click(within(row).getByRole("button", { name: "Revoke" }));
    expect(requests(fetchMock, "/api/v1/agents/id-athens/revoke/")).toHaveLength(0);
    const confirm = within(row).getByRole("group", { name: "Confirm: Revoke" });
    expect(confirm.textContent).toContain("Revoke athens?");
    fireEvent.click(within(confirm).getByRole("button", { name: "Revoke" }));
    await waitFor(() => {
      expect(requests(fetchMock, "/api/v1/agents/id-athens/revoke/", "POST")).toHaveLength(1);
    });
  });

  it("re-keys an agent with a --force command for its own name and address", async () => {
    mockApi(
      agentRoutes("operator", {
        "POST /api/v1/enrollment-tokens/": reply(201, {
          id: 9,
          token: "fet_rekey9",
          prefix: "fet_reke",
          note: "re-key",
          agent_name: "athens",
          rekey: true,
          created_at: new Date().toISOString(),
          expires_at: "2025-03-01T13:00:00Z",
        }),
      }),
    );
    renderWithProviders(<AgentsPage />, "/agents", meAs("operator"));
    const row = (await screen.findByText("athens")).closest("tr");
    if (row === null) {
      throw new Error("no row for athens");
    }
    fireEvent.click(within(row).getByRole("button", { name: "Re-key" }));
    expect(
      await screen.findByText(
        `fathom-agent enroll --server ${window.location.origin} --token fet_rekey9 --name athens --address 198.18.1.2 --force`,
      ),
    ).toBeDefined();
  });
});
