import { fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { components } from "../api/schema";
import type { Role } from "../lib/roles";
import { mockApi, reply, type MockRequest } from "../test/mockApi";
import { meAs, renderWithProviders, sessionRoutes } from "../test/render";
import { AlertSettingsPage } from "./AlertSettingsPage";

function renderAs(role: Role, channels: components["schemas"]["Channel"][] = [], posted: MockRequest[] = []) {
  mockApi({
    ...sessionRoutes(role),
    "/api/v1/alerts/rules/": [],
    "/api/v1/alerts/silences/": [],
    "POST /api/v1/alerts/channels/": (request: MockRequest) => {
      posted.push(request);
      return reply(201, { ...channel, kind: "pagerduty", target: "PagerDuty service …d1a6", secret: null });
    },
    "/api/v1/alerts/channels/": channels,
  });
  renderWithProviders(<AlertSettingsPage />, "/alerts/settings", meAs(role));
}

const channel: components["schemas"]["Channel"] = {
  id: 1,
  name: "noc-hook",
  kind: "webhook",
  target: "https://hooks.example.net/…",
  matchers: [],
  send_resolved: true,
  enabled: true,
  disabled_reason: "",
  last_error: "",
  last_success_at: null,
  held_until: null,
  created_at: "2026-12-01T08:00:00Z",
};

describe("AlertSettingsPage by role", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("lets a viewer only read", async () => {
    renderAs("viewer");
    expect(await screen.findByText("No silences.")).toBeDefined();
    expect(await screen.findByText(/No channels/)).toBeDefined();
    for (const name of ["Add rule", "Add silence", "Add channel"]) {
      expect(screen.queryByRole("button", { name })).toBeNull();
    }
  });

  it("lets an operator silence but not edit rules or channels", async () => {
    renderAs("operator");
    expect(await screen.findByRole("button", { name: "Add silence" })).toBeDefined();
    expect(await screen.findByText(/No channels/)).toBeDefined();
    expect(screen.queryByRole("button", { name: "Add rule" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Add channel" })).toBeNull();
  });

  it("lets an admin edit everything", async () => {
    renderAs("admin");
    expect(await screen.findByRole("button", { name: "Add rule" })).toBeDefined();
    expect(await screen.findByRole("button", { name: "Add channel" })).toBeDefined();
    expect(screen.getByRole("button", { name: "Add silence" })).toBeDefined();
  });

  it("shows a channel held by its receiver's Retry-After, and until when", async () => {
    renderAs("viewer", [{ ...channel, last_error: "HTTP 429: slow down", held_until: "2026-12-03T13:05:00Z" }]);
    expect(await screen.findByText(/held until 2026-12-03 13:05.*HTTP 429: slow down/)).toBeDefined();
  });

  it("asks a paging service for its key, hidden, and sends it where the server takes it", async () => {
    const posted: MockRequest[] = [];
    renderAs("admin", [], posted);
    fireEvent.change(await screen.findByLabelText("Kind"), { target: { value: "pagerduty" } });
    const key = screen.getByLabelText("Integration key");
    expect(key.getAttribute("type")).toBe("password");
    expect(screen.getByLabelText("Events API URL").getAttribute("placeholder")).toMatch(/events\.pagerduty\.com/);
    fireEvent.change(screen.getByLabelText("Channel name"), { target: { value: "noc-pd" } });
    fireEvent.change(key, { target: { value: "e93facc04764012d7bfb002500d5d1a6" } });
    fireEvent.click(screen.getByRole("button", { name: "Add channel" }));
    await waitFor(() => {
      expect(posted).toHaveLength(1);
    });
    expect(posted[0]?.body).toEqual({
      name: "noc-pd",
      kind: "pagerduty",
      config: { routing_key: "e93facc04764012d7bfb002500d5d1a6" },
    });
    fireEvent.change(screen.getByLabelText("Kind"), { target: { value: "teams" } });
    expect(screen.queryByLabelText("Integration key")).toBeNull();
    expect(screen.getByLabelText("Workflow URL")).toBeDefined();
  });
});
