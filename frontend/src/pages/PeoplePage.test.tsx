import { fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import type { ApiToken, Person } from "../api/agentQueries";
import { App } from "../App";
import { mockApi, reply, requests } from "../test/mockApi";
import { meAs, renderWithProviders, sessionRoutes } from "../test/render";
import { PeoplePage } from "./PeoplePage";

const PEOPLE: Person[] = [
  {
    id: 1,
    username: "ada",
    email: "ada@example.org",
    role: "admin",
    is_active: true,
    last_login: new Date(Date.now() - 600_000).toISOString(),
    date_joined: "2024-01-01T00:00:00Z",
  },
  { id: 2, username: "otto", email: "", role: "operator", is_active: false, last_login: null, date_joined: "2024-02-01T00:00:00Z" },
];

const ROLE_CHOICES = {
  role: [
    { value: "viewer", label: "Viewer", color: "#6e7781" },
    { value: "operator", label: "Operator", color: "#0969da" },
    { value: "admin", label: "Admin", color: "#8250df" },
  ],
};

const NO_TOKENS: ApiToken[] = [];

describe("navigation by role", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("shows an admin People and Audit, and lists people", async () => {
    mockApi({ ...sessionRoutes("admin", ROLE_CHOICES), "/api/v1/people/": PEOPLE });
    renderWithProviders(<App />, "/people");
    const nav = await screen.findByRole("navigation");
    expect(within(nav).getByRole("link", { name: "People" })).toBeDefined();
    expect(within(nav).getByRole("link", { name: "Audit" })).toBeDefined();
    expect(screen.getByRole("link", { name: "Account" }).getAttribute("href")).toBe("/tokens");
    expect(await screen.findByText("otto")).toBeDefined();
    expect(screen.getByText("(you)").closest("tr")?.textContent).toContain("ada");
  });

  it("shows an operator their account (password, API tokens) but neither People nor Audit", async () => {
    mockApi({ ...sessionRoutes("operator"), "/api/v1/api-tokens/": NO_TOKENS });
    renderWithProviders(<App />, "/tokens");
    const nav = await screen.findByRole("navigation");
    expect(within(nav).queryByRole("link", { name: "People" })).toBeNull();
    expect(within(nav).queryByRole("link", { name: "Audit" })).toBeNull();
    expect(screen.getByRole("link", { name: "Account" }).getAttribute("href")).toBe("/tokens");
    expect(await screen.findByRole("heading", { name: "Your account" })).toBeDefined();
    expect(screen.getByRole("button", { name: "Change password" })).toBeDefined();
    expect(await screen.findByText(/You have no API tokens/)).toBeDefined();
    expect(screen.queryByLabelText("Everyone's tokens")).toBeNull();
  });
});

describe("PeoplePage", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    vi.restoreAllMocks();
  });

  it("shows the last-admin refusal beside that person's role", async () => {
    const refusal = "this is the last active admin: make someone else admin first";
    const fetchMock = mockApi({
      ...sessionRoutes("admin", ROLE_CHOICES),
      "/api/v1/people/": PEOPLE,
      "PATCH /api/v1/people/1/": reply(400, { role: [refusal] }),
    });
    renderWithProviders(<PeoplePage />, "/people", meAs("admin"));
    const select = await screen.findByLabelText("Role of ada");
    fireEvent.change(select, { target: { value: "viewer" } });
    const message = await screen.findByText(refusal);
    expect(message.closest("td")).toBe(select.closest("td"));
    expect(requests(fetchMock, "/api/v1/people/1/", "PATCH")[0]?.body).toEqual({ role: "viewer" });
  });

  it("adds a person and enables a disabled one", async () => {
    const fetchMock = mockApi({
      ...sessionRoutes("admin", ROLE_CHOICES),
      "/api/v1/people/": PEOPLE,
      "POST /api/v1/people/": reply(201, { ...PEOPLE[1], id: 3, username: "vera", role: "viewer", is_active: true }),
      "PATCH /api/v1/people/2/": { ...PEOPLE[1], is_active: true },
    });
    renderWithProviders(<PeoplePage />, "/people", meAs("admin"));
    const otto = (await screen.findByText("otto")).closest("tr");
    if (otto === null) {
      throw new Error("no row for otto");
    }
    fireEvent.click(within(otto).getByRole("button", { name: "Enable" }));
    fireEvent.change(screen.getByLabelText("Username"), { target: { value: "vera" } });
    fireEvent.change(screen.getByLabelText("Initial password"), { target: { value: "correct horse" } });
    fireEvent.change(screen.getByLabelText("Role"), { target: { value: "operator" } });
    fireEvent.click(screen.getByRole("button", { name: "Add person" }));
    expect(await screen.findByText(/Added vera/)).toBeDefined();
    expect(requests(fetchMock, "/api/v1/people/", "POST")[0]?.body).toEqual({
      username: "vera",
      email: "",
      password: "correct horse",
      role: "operator",
    });
    await waitFor(() => {
      expect(requests(fetchMock, "/api/v1/people/2/", "PATCH")[0]?.body).toEqual({ is_active: true });
    });
  });

  it("tells a non-admin the page is not theirs", () => {
    mockApi(sessionRoutes("operator"));
    renderWithProviders(<PeoplePage />, "/people", meAs("operator"));
    expect(screen.getByText("Only admins manage people.")).toBeDefined();
  });
});
