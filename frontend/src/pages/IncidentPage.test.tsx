import { fireEvent, screen, waitFor } from "@testing-library/react";
import { Route, Routes } from "react-router-dom";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { IncidentDetail } from "../api/alertQueries";
import type { Role } from "../lib/roles";
import { mockApi, requests } from "../test/mockApi";
import { meAs, renderWithProviders, sessionRoutes } from "../test/render";
import { IncidentPage } from "./IncidentPage";

// An agent-down incident: no path, so no RTT chart to load.
const INCIDENT: IncidentDetail = {
  id: 7,
  group_key: "agent-down:dcb",
  title: "dcb is down",
  cause: "",
  status: "open",
  severity: "critical",
  opened_at: "2026-02-01T10:00:00Z",
  acknowledged_at: null,
  acknowledged_by: null,
  ack_comment: "",
  resolved_at: null,
  resolved_by: null,
  last_notified_at: null,
  alert_count: 1,
  firing_count: 1,
  alerts: [
    {
      id: 70,
      rule: "agent-down",
      severity: "critical",
      state: "firing",
      silenced: false,
      inhibited: false,
      summary: "dcb has not reported for 10 min",
      labels: { agent: ["dcb"], agent_id: "b", metric: "agent" },
      evidence: {},
      advice: "",
      value: null,
      started_at: "2026-02-01T09:50:00Z",
      firing_at: "2026-02-01T10:00:00Z",
      last_true_at: "2026-02-01T10:00:00Z",
      resolved_at: null,
      finding_id: null,
    },
  ],
  events: [{ at: "2026-02-01T10:00:00Z", kind: "opened", actor: "", text: "opened" }],
  deliveries: [],
};

function renderIncident(role: Role, incident: IncidentDetail = INCIDENT) {
  const fetchMock = mockApi({
    ...sessionRoutes(role),
    "/api/v1/alerts/incidents/7/": incident,
    "POST /api/v1/alerts/incidents/7/acknowledge/": { ...INCIDENT, status: "acknowledged" },
  });
  renderWithProviders(
    <Routes>
      <Route path="/incidents/:id" element={<IncidentPage />} />
    </Routes>,
    "/incidents/7",
    meAs(role),
  );
  return fetchMock;
}

describe("IncidentPage", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("shows a viewer the incident without acknowledge, resolve or silence", async () => {
    renderIncident("viewer");
    expect(await screen.findByRole("heading", { name: "#7 dcb is down" })).toBeDefined();
    expect(screen.getByText("dcb has not reported for 10 min")).toBeDefined();
    expect(screen.queryByRole("button", { name: "Acknowledge" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Resolve" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Silence from here" })).toBeNull();
    expect(screen.queryByLabelText("Comment")).toBeNull();
  });

  it("says where the degraded paths meet, and nothing where the server named nothing", async () => {
    const cause = "hop 198.18.99.9 is on both degraded paths and on no path that measured normally";
    renderIncident("viewer", { ...INCIDENT, title: "2 throughput alerts, all through hop 198.18.99.9", cause });
    expect((await screen.findByTestId("incident-cause")).textContent).toBe(`Where: ${cause}`);
  });

  it("shows no cause line for an incident of one path", async () => {
    renderIncident("viewer");
    await screen.findByRole("heading", { name: "#7 dcb is down" });
    expect(screen.queryByTestId("incident-cause")).toBeNull();
  });

  it("lets an operator acknowledge, resolve and silence, with a comment", async () => {
    const fetchMock = renderIncident("operator");
    const acknowledge = await screen.findByRole("button", { name: "Acknowledge" });
    expect(screen.getByRole("button", { name: "Resolve" })).toBeDefined();
    expect(screen.getByRole("button", { name: "Silence from here" })).toBeDefined();
    fireEvent.change(screen.getByLabelText("Comment"), { target: { value: "rebooting it" } });
    fireEvent.click(acknowledge);
    await waitFor(() => {
      expect(requests(fetchMock, "/api/v1/alerts/incidents/7/acknowledge/", "POST")[0]?.body).toEqual({
        comment: "rebooting it",
      });
    });
  });
});
