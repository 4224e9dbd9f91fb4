import { screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { components } from "../api/schema";
import type { Role } from "../lib/roles";
import { mockApi } from "../test/mockApi";
import { meAs, renderWithProviders, sessionRoutes } from "../test/render";
import { AlertSettingsPage } from "./AlertSettingsPage";

function renderAs(role: Role, channels: components["schemas"]["Channel"][] = []) {
  mockApi({
    ...sessionRoutes(role),
    "/api/v1/alerts/rules/": [],
    "/api/v1/alerts/silences/": [],
    "/api/v1/alerts/channels/": channels,
  });
  renderWithProviders(<AlertSettingsPage />, "/alerts/settings", meAs(role));
}

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
    renderAs("viewer", [
      {
        id: 1,
        name: "noc-hook",
        kind: "webhook",
        target: "https://hooks.example.net/…",
        matchers: [],
        send_resolved: true,
        enabled: true,
        disabled_reason: "",
        last_error: "HTTP 429: slow down",
        last_success_at: null,
        held_until: "2026-12-03T13:05:00Z",
        created_at: "2026-12-01T08:00:00Z",
      },
    ]);
    expect(await screen.findByText(/held until 2026-12-03 13:05.*HTTP 429: slow down/)).toBeDefined();
  });
});
