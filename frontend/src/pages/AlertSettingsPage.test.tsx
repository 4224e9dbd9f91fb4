import { screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { Role } from "../lib/roles";
import { mockApi } from "../test/mockApi";
import { meAs, renderWithProviders, sessionRoutes } from "../test/render";
import { AlertSettingsPage } from "./AlertSettingsPage";

function renderAs(role: Role) {
  mockApi({
    ...sessionRoutes(role),
    "/api/v1/alerts/rules/": [],
    "/api/v1/alerts/silences/": [],
    "/api/v1/alerts/channels/": [],
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
});
